// Existing IPv4 stacks are unchanged by an upgrade: the checkpoint of a stack made with the package
// as it was before dual-stack egress, shared-pool ownership and quotas (commit 379dade, exported
// into fixtures/upgrade-ipv4-stack.json) is imported, and the same program with this version
// previews no change, and `up` changes nothing and keeps every address.
import * as fs from "node:fs";
import * as path from "node:path";
import type * as automation from "@pulumi/pulumi/automation";
import { afterAll, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";
import { upgradeProgram } from "./upgrade-program";

type Pkg = typeof import("../../provider/index");

const fixture = JSON.parse(
  fs.readFileSync(path.join(__dirname, "fixtures", "upgrade-ipv4-stack.json"), "utf8"),
) as { outputs: Record<string, unknown>; deployment: automation.Deployment };

const h = Harness.create("egress-ipam-upgrade");
afterAll(() => h.dispose());

it("previews no change for a stack the earlier version made, and up keeps every address", async () => {
  await h.program(upgradeProgram(h.pkg<Pkg>("pulumi-egress-ipam")));
  await h.importState(fixture.deployment);
  const preview = await h.preview();
  expect(changesOf(preview.changeSummary)).toEqual({});
  const up = await h.up();
  expect(changesOf(up.summary.resourceChanges)).toEqual({});
  expect(Object.fromEntries(Object.entries(up.outputs).map(([k, v]) => [k, v.value]))).toEqual(
    fixture.outputs,
  );
  await h.destroy();
  expect((await h.resources()).filter((r) => r.type !== "pulumi:pulumi:Stack")).toEqual([]);
});
