import { afterAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";

// The whole engine path with the smallest resource: preview → up → no-op up → update → refresh →
// destroy, from a project that installed the packed package.
describe("engine round trip with the Echo probe", () => {
  const h = Harness.create("echo");
  const { Echo } = h.pkg<typeof import("../../provider/testing")>("pulumi-egress-ipam/testing");
  const program = (value: string) => async () => {
    const echo = new Echo("probe", { value });
    return { value: echo.value, revision: echo.revision };
  };
  afterAll(() => h.dispose());

  it("previews the create with the planned inputs", async () => {
    await h.program(program("one"));
    const preview = await h.preview();
    expect(preview.changeSummary).toEqual({ create: 2 }); // the stack and the probe
    expect(preview.op("probe")).toBe("create");
    expect(preview.planned("probe")).toMatchObject({ value: "one" });
  });

  it("creates, then a second up changes nothing", async () => {
    const first = await h.up();
    expect(first.outputs.value?.value).toBe("one");
    expect(first.outputs.revision?.value).toBe(1);
    const second = await h.up();
    expect(changesOf(second.summary.resourceChanges)).toEqual({});
    expect(second.outputs.revision?.value).toBe(1);
  });

  it("updates in place when the input changes", async () => {
    await h.program(program("two"));
    const preview = await h.preview();
    expect(preview.op("probe")).toBe("update");
    const result = await h.up();
    expect(changesOf(result.summary.resourceChanges)).toEqual({ update: 1 });
    expect(result.outputs).toMatchObject({ value: { value: "two" }, revision: { value: 2 } });
  });

  it("stores a small provider that loads the package by name", async () => {
    const resources = await h.resources();
    const probe = resources.find((r) => r.type === "pulumi-nodejs:dynamic/egress-ipam:Echo");
    expect(probe).toBeDefined();
    const provider = String(probe!.inputs?.__provider);
    expect(provider).toContain('require("pulumi-egress-ipam/shims/echo")');
    expect(provider.length).toBeLessThan(512);
  });

  it("refresh finds no drift and destroy removes everything", async () => {
    const refresh = await h.refresh();
    expect(changesOf(refresh.summary.resourceChanges)).toEqual({});
    const destroy = await h.destroy();
    expect(changesOf(destroy.summary.resourceChanges)).toEqual({ delete: 2 });
    expect((await h.resources()).filter((r) => r.type !== "pulumi:pulumi:Stack")).toEqual([]);
  });
});
