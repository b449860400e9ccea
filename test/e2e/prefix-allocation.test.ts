import { afterAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";

type Pkg = typeof import("../../provider/index");

// Blocks carved from pools with the real engine: the exact block at preview, child pools planned
// from their parent's planned block, stability, the pool's rule, and overlaps refused naming the holder.
describe("PrefixAllocation with the real engine", () => {
  const h = Harness.create("blocks");
  const { IpPool, IpAllocation, PrefixAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
  afterAll(() => h.dispose());

  /** A /8 of environments (/16 each), /24 subnets per zone from each, an address and IPv6 /64s. */
  const program =
    (envs: string[], extra: (root: InstanceType<Pkg["IpPool"]>) => void = () => undefined) =>
    async () => {
      const root = new IpPool("root", {
        ranges: [{ subnet: "10.0.0.0/8" }],
        strategy: "lowest-free",
        prefixLengths: { min: 16, max: 24, default: 16 },
      });
      const out: Record<string, unknown> = {};
      for (const env of envs) {
        const block = new PrefixAllocation(env, { pool: root });
        const subnets = new IpPool(`${env}-subnets`, {
          ranges: [{ subnet: block.cidr }],
          strategy: "lowest-free",
          prefixLengths: { min: 24, max: 28, default: 24 },
        });
        out[env] = block.cidr;
        for (const zone of ["a", "b"]) {
          out[`${env}-${zone}`] = new PrefixAllocation(`${env}-${zone}`, { pool: subnets }).cidr;
        }
      }
      out.vip = new IpAllocation("vip", { pool: root }).ip;
      const v6 = new IpPool("v6", { ranges: [{ subnet: "2001:db8::/48" }], strategy: "lowest-free" });
      out.v6a = new PrefixAllocation("v6a", { pool: v6, prefixLength: 64 }).cidr;
      out.v6b = new PrefixAllocation("v6b", { pool: v6, prefixLength: 64 }).cidr;
      extra(root);
      return out;
    };

  // Blocks come from between each range's rangeStart and rangeEnd and never hold its gateway: with
  // host-local's defaults a subnet's first block (its network address, the gateway) and, IPv4, its
  // last (the broadcast address) are never handed out. Best fit takes the exact fits those edges
  // leave: 10.1.0.0/16 below and 10.254.0.0/16 below the /8's top, and likewise in each /16.
  const expected = {
    prod: "10.1.0.0/16",
    "prod-a": "10.1.1.0/24",
    "prod-b": "10.1.254.0/24",
    dev: "10.254.0.0/16",
    "dev-a": "10.254.1.0/24",
    "dev-b": "10.254.254.0/24",
    // Lowest free after the gateway, outside both blocks.
    vip: "10.0.0.2",
    v6a: "2001:db8:0:1::/64",
    v6b: "2001:db8:0:2::/64",
  };

  it("shows every block at preview, child pools' blocks included, and up creates exactly those", async () => {
    await h.program(program(["prod", "dev"]));
    const preview = await h.preview();
    const planned = Object.fromEntries(
      Object.keys(expected).map((n) => [n, preview.planned(n)?.[n === "vip" ? "ip" : "cidr"]]),
    );
    expect(planned).toEqual(expected);
    expect(preview.planned("prod")).toMatchObject({
      network: "10.1.0.0",
      prefixLength: 16,
      first: "10.1.0.1",
      last: "10.1.255.254",
      size: "65536",
    });
    const up = await h.up();
    expect(Object.fromEntries(Object.keys(expected).map((n) => [n, up.outputs[n]?.value]))).toEqual(expected);
  });

  it("changes nothing on a second up, and refresh finds no drift", async () => {
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({});
    const root = (await h.resources()).find((r) => r.urn.endsWith("IpPool::root"))!;
    expect(root.outputs?.allocations).toEqual([
      { ip: "10.0.0.2", owner: expect.stringMatching(/IpAllocation::vip$/) },
      { ip: "10.1.0.0/16", owner: expect.stringMatching(/PrefixAllocation::prod$/) },
      { ip: "10.254.0.0/16", owner: expect.stringMatching(/PrefixAllocation::dev$/) },
    ]);
    // The range's 2^24 - 2 addresses (no network, no broadcast) but the gateway, minus the two /16s
    // (wholly inside the range) and one address.
    expect(root.outputs?.free).toBe(String(2 ** 24 - 2 - 1 - 65536 * 2 - 1));
  });

  it("adds an environment first in program order without moving any block", async () => {
    await h.program(program(["test", "prod", "dev"]));
    const preview = await h.preview();
    expect(preview.planned("test")?.cidr).toBe("10.2.0.0/16");
    const up = await h.up();
    // The block, its subnet pool and the pool's two blocks.
    expect(changesOf(up.summary.resourceChanges)).toEqual({ create: 4 });
    for (const [name, cidr] of Object.entries(expected)) expect(up.outputs[name]?.value).toBe(cidr);
    expect(up.outputs["test-a"]?.value).toBe("10.2.1.0/24");
  });

  it("refuses at preview a requested block that overlaps a held one, naming its holder", async () => {
    await h.program(
      program(
        ["test", "prod", "dev"],
        (root) => new PrefixAllocation("clash", { pool: root, cidr: "10.1.128.0/17" }),
      ),
    );
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toContain("[IP_UNAVAILABLE]");
    expect(err).toMatch(
      /10\.1\.128\.0\/17 .*overlaps what is held by urn:pulumi:test::blocks::[^ ]*PrefixAllocation::prod/,
    );
  });

  it.each([
    [
      // vip's 10.0.0.2 is in no block the range allows (each holds the network address or the gateway).
      "a requested block over a held address",
      "10.3.0.0/24",
      /10\.3\.0\.0\/24 .*overlaps what is held by [^ ]*IpAllocation::held/,
    ],
    [
      "an address inside a held block",
      "10.254.7.7",
      /requested address 10\.254\.7\.7 .*overlaps what is held by [^ ]*PrefixAllocation::dev/,
    ],
  ])("refuses at preview %s, naming its holder", async (_, entry, message) => {
    await h.program(
      program(["test", "prod", "dev"], (root) => {
        if (entry.includes("/")) {
          new IpAllocation("held", { pool: root, ip: "10.3.0.9" });
          new PrefixAllocation("clash", { pool: root, cidr: entry });
        } else new IpAllocation("clash", { pool: root, ip: entry });
      }),
    );
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toContain("[IP_UNAVAILABLE]");
    expect(err).toMatch(message);
  });

  it("refuses a length outside the pool's rule at preview, naming the rule, and changes nothing", async () => {
    await h.program(
      program(
        ["test", "prod", "dev"],
        (root) => new PrefixAllocation("huge", { pool: root, prefixLength: 12 }),
      ),
    );
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toContain("[PREFIX_NOT_ALLOWED]");
    expect(err).toContain("/12 block is outside the pool's rule prefixLengths /16 to /24, default /16");
    await expect(h.up()).rejects.toThrow();
    expect((await h.resources()).some((r) => r.urn.endsWith("::huge"))).toBe(false);
  });

  it("destroys everything", async () => {
    await h.program(program(["test", "prod", "dev"]));
    const destroy = await h.destroy();
    expect(changesOf(destroy.summary.resourceChanges)).toEqual({ delete: 18 });
  });
});

describe("blocks planned in program order whatever order the engine checks them in", () => {
  const h = Harness.create("block-order");
  const { IpPool, IpAllocation, PrefixAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
  afterAll(() => h.dispose());
  // 30 holders of one pool, blocks of three lengths and addresses mixed: each plan depends on every
  // plan before it (best fit), so any plan made out of program order would show.
  const holders = Array.from({ length: 30 }, (_, i) => ({
    name: `h${i}`,
    length: i % 5 === 4 ? undefined : [26, 28, 27][i % 3]!,
  }));
  const program = async () => {
    const pool = new IpPool("pool", {
      ranges: [{ subnet: "10.40.0.0/20" }],
      strategy: "lowest-free",
      exclude: ["10.40.0.0/25"],
    });
    const out: Record<string, unknown> = {};
    for (const { name, length } of holders) {
      out[name] =
        length === undefined
          ? new IpAllocation(name, { pool }).ip
          : new PrefixAllocation(name, { pool, prefixLength: length }).cidr;
    }
    return out;
  };
  const plannedOf = (preview: Awaited<ReturnType<typeof h.preview>>) =>
    holders.map(({ name, length }) => preview.planned(name)?.[length === undefined ? "ip" : "cidr"]);

  it("shows the same plan at 6 previews with --parallel 16, and up creates exactly it", async () => {
    await h.program(program);
    const first = plannedOf(await h.preview({ parallel: 16 }));
    expect(first.every((x) => typeof x === "string")).toBe(true);
    expect(new Set(first).size).toBe(holders.length);
    for (let i = 0; i < 5; i++) expect(plannedOf(await h.preview({ parallel: 16 }))).toEqual(first);
    const up = await h.up({ parallel: 16 });
    expect(holders.map(({ name }) => up.outputs[name]?.value)).toEqual(first);
  });

  it("refuses at preview to change a parent block under a child pool with holders, naming them", async () => {
    const parentProgram = (length: number) => async () => {
      const pool = new IpPool("root", { ranges: [{ subnet: "10.50.0.0/16" }], strategy: "lowest-free" });
      const parent = new PrefixAllocation("parent", { pool, prefixLength: length });
      const child = new IpPool("child", { ranges: [{ subnet: parent.cidr }] });
      return { parent: parent.cidr, web: new IpAllocation("web", { pool: child }).ip };
    };
    await h.program(parentProgram(24));
    const up = await h.up();
    // 10.50.0.0/24 holds the root's network address and gateway; web's is its child range's first.
    expect([up.outputs.parent?.value, up.outputs.web?.value]).toEqual(["10.50.1.0/24", "10.50.1.2"]);
    await h.program(parentProgram(25));
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toContain(
      "[POOL_IN_USE] this change gives up block 10.50.1.0/24, and pools carved from it have holders",
    );
    expect(err).toMatch(/10\.50\.1\.2 \(held by urn:pulumi:test::block-order::[^)]*IpAllocation::web\)/);
    await expect(h.up()).rejects.toThrow(/10\.50\.1\.2/);
    const state = await h.resources();
    expect(state.find((r) => r.urn.endsWith("::parent"))?.outputs?.cidr).toBe("10.50.1.0/24");
  });
});

describe("a block renamed with adopt", () => {
  const h = Harness.create("block-adopt");
  const { IpPool, PrefixAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
  afterAll(() => h.dispose());
  const program = (names: Record<string, { cidr?: string; adopt?: boolean }>) => async () => {
    const pool = new IpPool("pool", { ranges: [{ subnet: "10.60.0.0/16" }], prefixLengths: { default: 24 } });
    return Object.fromEntries(
      Object.entries(names).map(([name, args]) => [name, new PrefixAllocation(name, { pool, ...args }).cidr]),
    );
  };

  it("keeps the block: the new name adopts it, the old one's delete leaves it", async () => {
    await h.program(program({ old: {} }));
    expect((await h.up()).outputs.old?.value).toBe("10.60.1.0/24");
    await h.program(program({ old: {}, renamed: { cidr: "10.60.1.0/24" } }));
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toMatch(
      /requested block 10\.60\.1\.0\/24 .*is held by [^ ]*PrefixAllocation::old; set adopt: true/,
    );
    await h.program(program({ renamed: { cidr: "10.60.1.0/24", adopt: true } }));
    const up = await h.up();
    expect(changesOf(up.summary.resourceChanges)).toEqual({ create: 1, delete: 1 });
    expect(up.outputs.renamed?.value).toBe("10.60.1.0/24");
    // Held by the new name now: a new automatic block goes elsewhere.
    await h.program(program({ renamed: { cidr: "10.60.1.0/24", adopt: true }, next: {} }));
    expect((await h.preview()).planned("next")?.cidr).toBe("10.60.2.0/24");
  });

  it("refuses at preview to adopt an address inside another's block", async () => {
    const { IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
    await h.program(async () => {
      const pool = new IpPool("pool", {
        ranges: [{ subnet: "10.60.0.0/16" }],
        prefixLengths: { default: 24 },
      });
      new PrefixAllocation("renamed", { pool, cidr: "10.60.1.0/24", adopt: true });
      new IpAllocation("inside", { pool, ip: "10.60.1.9", adopt: true });
    });
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toMatch(
      /requested address 10\.60\.1\.9 .*overlaps what is held by [^ ]*PrefixAllocation::renamed/,
    );
  });

  it("refuses to adopt a block that overlaps another's without being it", async () => {
    await h.program(
      program({
        renamed: { cidr: "10.60.1.0/24", adopt: true },
        inner: { cidr: "10.60.1.0/25", adopt: true },
      }),
    );
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toMatch(
      /requested block 10\.60\.1\.0\/25 .*overlaps what is held by [^ ]*PrefixAllocation::renamed/,
    );
  });
});

describe("a block given up for another", () => {
  const h = Harness.create("block-change");
  const { IpPool, PrefixAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
  afterAll(() => h.dispose());
  // The root pool is exactly one /24 block wide, so a pool that only overlaps the block (its own
  // pool) or equals it must not count as carved from it; the child pool has no holders.
  const program = (length: number) => async () => {
    const root = new IpPool("root", { ranges: [{ subnet: "10.80.0.0/24" }], strategy: "lowest-free" });
    const other = new PrefixAllocation("other", { pool: root, prefixLength: 26 });
    const block = new PrefixAllocation("block", { pool: root, prefixLength: length });
    new IpPool("empty-child", { ranges: [{ subnet: block.cidr }] });
    return { block: block.cidr, other: other.cidr };
  };

  it("is replaced when its pool and its child pools have no holders inside it", async () => {
    await h.program(program(26));
    const first = await h.up();
    // The range's two whole /26s: 10.80.0.0/26 holds the network address and the gateway, .192/26
    // the broadcast address.
    expect([first.outputs.other?.value, first.outputs.block?.value]).toEqual([
      "10.80.0.64/26",
      "10.80.0.128/26",
    ]);
    await h.program(program(27));
    const preview = await h.preview();
    expect(preview.planned("block")?.cidr).toBe("10.80.0.32/27");
    const up = await h.up();
    expect(up.outputs.block?.value).toBe("10.80.0.32/27");
    expect(up.outputs.other?.value).toBe("10.80.0.64/26");
  });
});
