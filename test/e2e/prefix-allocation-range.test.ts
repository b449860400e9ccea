import { afterAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";

type Pkg = typeof import("../../provider/index");

// Blocks come from between a range's rangeStart and rangeEnd and never hold its gateway, as
// host-local hands out addresses (issue #56): a /16 whose range is 10.90.7.0-10.90.7.255, gateway
// 10.90.0.1, once gave 10.90.0.0/26. With the real engine: what preview plans and up creates, and a
// requested block outside the range, or over the gateway, refused at preview.
describe("blocks of a pool whose range is part of its subnet", () => {
  const h = Harness.create("block-range");
  const { IpPool, PrefixAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
  afterAll(() => h.dispose());

  const program =
    (extra: Record<string, { pool: "lan" | "mid"; cidr?: string; prefixLength?: number }> = {}) =>
    async () => {
      const lan = new IpPool("lan", {
        ranges: [
          { subnet: "10.90.0.0/16", rangeStart: "10.90.7.0", rangeEnd: "10.90.7.255", gateway: "10.90.0.1" },
        ],
        prefixLengths: { default: 26 },
      });
      // A gateway in the middle of the range: the /26 holding it is never a block.
      const mid = new IpPool("mid", {
        ranges: [
          { subnet: "10.91.0.0/24", rangeStart: "10.91.0.0", rangeEnd: "10.91.0.255", gateway: "10.91.0.65" },
        ],
        strategy: "lowest-free",
        prefixLengths: { default: 26 },
      });
      const pools = { lan, mid };
      const out: Record<string, unknown> = {
        a: new PrefixAllocation("a", { pool: lan }).cidr,
        b: new PrefixAllocation("b", { pool: lan }).cidr,
        whole: new PrefixAllocation("whole", { pool: lan, cidr: "10.90.7.128/25", prefixLength: 25 }).cidr,
        m1: new PrefixAllocation("m1", { pool: mid }).cidr,
        m2: new PrefixAllocation("m2", { pool: mid }).cidr,
        m3: new PrefixAllocation("m3", { pool: mid }).cidr,
      };
      for (const [name, { pool, ...args }] of Object.entries(extra)) {
        out[name] = new PrefixAllocation(name, { pool: pools[pool], ...args }).cidr;
      }
      return out;
    };

  const expected = {
    a: "10.90.7.0/26",
    b: "10.90.7.64/26",
    whole: "10.90.7.128/25",
    m1: "10.91.0.0/26",
    m2: "10.91.0.128/26",
    m3: "10.91.0.192/26",
  };

  it("plans every block inside the range at preview, never over the gateway, and up creates exactly those", async () => {
    await h.program(program());
    const preview = await h.preview();
    const planned = Object.fromEntries(Object.keys(expected).map((n) => [n, preview.planned(n)?.cidr]));
    expect(planned).toEqual(expected);
    const up = await h.up();
    expect(Object.fromEntries(Object.keys(expected).map((n) => [n, up.outputs[n]?.value]))).toEqual(expected);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });

  it("finds no fourth /26 in the range with the gateway in it (POOL_EXHAUSTED naming the range)", async () => {
    await h.program(program({ m4: { pool: "mid" } }));
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toContain("[POOL_EXHAUSTED] no free /26 block left in range set 10.91.0.0-10.91.0.255");
  });

  it.each([
    [
      "a block in the subnet but outside the range",
      { pool: "lan" as const, cidr: "10.90.0.0/26" },
      "[NOT_IN_RANGE] block 10.90.0.0/26 is not inside one range of range set 10.90.7.0-10.90.7.255: a block " +
        "is carved from between a range's rangeStart and rangeEnd; ask for a block inside one, or widen the range",
    ],
    [
      "a block holding the gateway",
      { pool: "mid" as const, cidr: "10.91.0.64/26" },
      "[IP_UNAVAILABLE] block 10.91.0.64/26 contains the gateway 10.91.0.65 of range 10.91.0.0-10.91.0.255: " +
        "ask for a block without it",
    ],
  ])(
    "refuses at preview %s, naming the block, the range and what to do; up creates nothing",
    async (_, args, text) => {
      await h.program(program({ asked: args }));
      const err = String(await h.preview().catch((e: Error) => e));
      expect(err).toContain(text);
      await expect(h.up()).rejects.toThrow(text.slice(0, 40));
      expect((await h.resources()).some((r) => r.urn.endsWith("::asked"))).toBe(false);
    },
  );

  it("destroys everything", async () => {
    await h.program(program());
    expect(changesOf((await h.destroy()).summary.resourceChanges)).toEqual({ delete: 9 });
  });
});
