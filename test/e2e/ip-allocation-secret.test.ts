// An address given as a secret (`ip: pulumi.secret("10.0.8.10")`, as a Python or YAML program gives
// it with Output.secret or fn::secret) is held like any other: the stack's taken set is read from
// its state, where the engine keeps a secret input (and the output of the same name) encrypted, so
// the address must still be readable there, or a later holder is planned the same address.
import { afterAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";

type Pkg = typeof import("../../provider/index");

describe("an IpAllocation given a secret ip", () => {
  const h = Harness.create("alloc-secret");
  const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
  const pulumi = h.pkg<typeof import("@pulumi/pulumi")>("@pulumi/pulumi");
  const program = (names: string[]) => async () => {
    const pool = new IpPool("pool", {
      ranges: [{ subnet: "10.0.8.0/24", rangeStart: "10.0.8.10", rangeEnd: "10.0.8.20" }],
    });
    const secret = new IpAllocation("secret", { pool, ip: pulumi.secret("10.0.8.10") });
    const out: Record<string, unknown> = { secret: secret.ip };
    for (const name of names) out[name] = new IpAllocation(name, { pool }).ip;
    return out;
  };
  afterAll(() => h.dispose());

  it("keeps its address from a holder added later, at preview and up", async () => {
    await h.program(program([]));
    await h.up();
    await h.program(program(["later"]));
    const preview = await h.preview();
    expect(preview.planned("later")?.ip).toBe("10.0.8.11");
    const up = await h.up();
    expect(up.outputs.later?.value).toBe("10.0.8.11");
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({});
    await h.destroy();
  });
});
