// Every example is a project users copy: run as they run it — the Pulumi CLI in the example's own
// folder with the Node.js language host, this package installed from its packed tarball — it must
// preview the addresses `up` assigns, apply, stay still on a second `up`, apply each step, and
// destroy without leaving anything behind.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExampleProject, exampleNames, prepareExamplesProject } from "../support/example-project";
import { changesOf, type PreviewResult, type StateResource } from "../support/harness";

/** Planned addresses of the allocations, by URN, as preview showed them. */
function plannedIps(preview: PreviewResult): Record<string, unknown> {
  return Object.fromEntries(
    preview.events.flatMap((e) => {
      const m = e.resourcePreEvent?.metadata;
      return m?.type.endsWith(":IpAllocation") && m.op === "create" ? [[m.urn, m.new?.inputs?.ip]] : [];
    }),
  );
}

/** Addresses the allocations hold in state, by URN. */
const heldIps = (resources: StateResource[]) =>
  Object.fromEntries(
    resources.filter((r) => r.type.endsWith(":IpAllocation")).map((r) => [r.urn, r.outputs?.ip]),
  );

const userResources = (resources: StateResource[]) =>
  resources.filter((r) => r.type !== "pulumi:pulumi:Stack" && !r.type.startsWith("pulumi:providers:"));

// Examples that cannot run with plain `pulumi up` here, and where they are tested instead.
const testedElsewhere: Record<string, string> = {
  // The AWS provider plugin is not served here.
  "aws-egress": "test/e2e/example-aws-egress.test.ts (mocks, and moto answering the lookups)",
};

let examplesDir = "";
beforeAll(() => {
  examplesDir = prepareExamplesProject();
}, 600_000);

describe.each(exampleNames().filter((n) => !(n in testedElsewhere)))(
  "example %s, with pulumi in its folder",
  (name) => {
    let project: ExampleProject | undefined;
    afterAll(() => project?.dispose());

    it("previews what up assigns, applies, stays still, applies its steps and destroys", async () => {
      project = ExampleProject.create(examplesDir, name, { stackName: "dev" });
      const h = project.harness;
      await h.project();

      const preview = await h.preview();
      expect(preview.changeSummary.create).toBeGreaterThan(1);
      const planned = plannedIps(preview);
      const up = await h.up();
      expect(Object.keys(up.outputs).length).toBeGreaterThan(0);
      const held = heldIps(await h.resources());
      expect(Object.keys(held).length).toBeGreaterThan(0);
      expect(held).toEqual(planned);
      expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});

      for (const step of project.steps()) {
        project.applyStep(step);
        const stepPreview = await h.preview();
        const stepPlanned = plannedIps(stepPreview);
        expect(changesOf(stepPreview.changeSummary), `${step} changes something`).not.toEqual({});
        await h.up();
        const after = heldIps(await h.resources());
        for (const [urn, ip] of Object.entries(stepPlanned)) expect(after[urn], urn).toBe(ip);
        expect(changesOf((await h.up()).summary.resourceChanges), `second up after ${step}`).toEqual({});
      }

      await h.destroy();
      expect(userResources(await h.resources())).toEqual([]);
    });
  },
);
