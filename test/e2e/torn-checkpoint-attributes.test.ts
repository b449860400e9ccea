// docs/operating.md, "After a killed `pulumi up`": on a file backend the kill can leave the
// checkpoint's attributes file empty (the backend writes it in place, the checkpoint itself by a
// rename), and every command then fails with "failed to load checkpoint: EOF"; deleting that file is
// the repair, and the stack keeps every address. The empty file is made by hand here, as the kill
// leaves it; provider-orphan.cluster.test.ts meets it now and then.
import * as fs from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";

type Pkg = typeof import("../../provider/index");

describe("a torn checkpoint attributes file, repaired as docs/operating.md says", () => {
  const h = Harness.create("torn-attrs");
  const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
  afterAll(() => h.dispose());

  it("fails every command with the documented error, and deleting the file restores the stack", async () => {
    await h.program(async () => {
      const pool = new IpPool("pool", { ranges: [{ subnet: "10.0.9.0/28" }] });
      return { a: new IpAllocation("a", { pool }).ip, b: new IpAllocation("b", { pool }).ip };
    });
    const up = await h.up();
    const attributes = `${h.checkpointFile}.attrs`;
    expect(fs.existsSync(attributes)).toBe(true);

    fs.writeFileSync(attributes, "");
    expect(String(await h.preview().catch((e: Error) => e))).toContain("failed to load checkpoint: EOF");

    fs.rmSync(attributes);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
    const again = await h.up();
    expect(changesOf(again.summary.resourceChanges)).toEqual({});
    expect([again.outputs.a?.value, again.outputs.b?.value]).toEqual([
      up.outputs.a?.value,
      up.outputs.b?.value,
    ]);
  });
});
