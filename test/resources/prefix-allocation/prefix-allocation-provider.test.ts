import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { prefixAllocationProvider } from "../../../provider/resources/prefix-allocation/prefix-allocation-provider";
import { blockDetails, blockLength } from "../../../provider/resources/pool/pool-blocks";
import { resolvePool, type PoolSpec } from "../../../provider/resources/pool/pool-spec";

const POOL = "urn:pulumi:dev::proj::pulumi-nodejs:dynamic/egress-ipam:IpPool::pool";
const OWNER = "urn:pulumi:dev::proj::pulumi-nodejs:dynamic/egress-ipam:PrefixAllocation::block";
let n = 0;

// `pulumi stack export` printing the given resources: the stack ledger reads held entries through
// the CLI named by PULUMI_EGRESS_IPAM_CLI.
function fakeStack(resources: unknown[] = []): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "prefix-provider-"));
  const cli = path.join(dir, "pulumi");
  const json = JSON.stringify({ version: 3, deployment: { resources } });
  fs.writeFileSync(cli, `#!/bin/sh\ncat <<'JSON'\n${json}\nJSON\n`, { mode: 0o755 });
  process.env.PULUMI_EGRESS_IPAM_CLI = cli;
  return `org/proj/prefix-${n++}`;
}
afterEach(() => delete process.env.PULUMI_EGRESS_IPAM_CLI);

const v4: PoolSpec = {
  ranges: [{ subnet: "10.20.0.0/16" }],
  prefixLengths: { min: 20, max: 28, default: 24 },
};
// Issue #56's pool: a /16 whose range is one /24 of it, its gateway outside that.
const lan: PoolSpec = {
  ranges: [
    { subnet: "10.90.0.0/16", rangeStart: "10.90.7.0", rangeEnd: "10.90.7.255", gateway: "10.90.0.1" },
  ],
  prefixLengths: { default: 26 },
};
const inputs = (pool: PoolSpec & { id?: string }, rest: Record<string, unknown> = {}) => ({
  holder: { stack: fakeStack(), owner: OWNER },
  pool: { id: POOL, ...pool },
  ...rest,
});

describe("PrefixAllocation check", () => {
  it.each([
    ["a CIDR with host bits set", v4, { cidr: "10.20.3.1/24" }, "cidr", "HOST_BITS_SET", /10\.20\.3\.0\/24/],
    ["a CIDR outside the pool", v4, { cidr: "10.30.0.0/24" }, "cidr", "NOT_IN_RANGE", /10\.30\.0\.0\/24/],
    [
      "a CIDR in the subnet but outside rangeStart-rangeEnd",
      lan,
      { cidr: "10.90.0.0/26" },
      "cidr",
      "NOT_IN_RANGE",
      /^block 10\.90\.0\.0\/26 is not inside one range of range set 10\.90\.7\.0-10\.90\.7\.255: .*widen the range$/,
    ],
    [
      "a CIDR holding the range's gateway",
      { ...lan, ranges: [{ subnet: "10.90.0.0/16", rangeStart: "10.90.0.0", rangeEnd: "10.90.7.255" }] },
      { cidr: "10.90.0.0/26" },
      "cidr",
      "IP_UNAVAILABLE",
      /^block 10\.90\.0\.0\/26 contains the gateway 10\.90\.0\.1 of range 10\.90\.0\.0-10\.90\.7\.255/,
    ],
    [
      "a length outside the rule",
      v4,
      { prefixLength: 16 },
      "prefixLength",
      "PREFIX_NOT_ALLOWED",
      /\/20 to \/28, default \/24/,
    ],
    [
      "a requested CIDR outside the rule",
      v4,
      { cidr: "10.20.1.0/29" },
      "cidr",
      "PREFIX_NOT_ALLOWED",
      /\/29 block/,
    ],
    [
      "no length and no default",
      { ranges: [{ subnet: "10.20.0.0/16" }] },
      {},
      "prefixLength",
      "PREFIX_NOT_ALLOWED",
      /set prefixLength/,
    ],
    [
      "a length and a CIDR that disagree",
      v4,
      { cidr: "10.20.1.0/24", prefixLength: 25 },
      "prefixLength",
      "INVALID_INPUT",
      /\/25 is not the length of cidr 10\.20\.1\.0\/24/,
    ],
    [
      "a block larger than every subnet",
      { ranges: [{ subnet: "10.20.0.0/16" }] },
      { prefixLength: 12 },
      "prefixLength",
      "PREFIX_NOT_ALLOWED",
      /a \/12 block is larger than every subnet of the pool \(the largest is a \/16\)/,
    ],
    ["adopt without a CIDR", v4, { adopt: true }, "adopt", "INVALID_INPUT", /set cidr/],
    [
      "a length that is no whole number",
      v4,
      { prefixLength: 24.5 },
      "prefixLength",
      "INVALID_INPUT",
      /whole number/,
    ],
    [
      "a dual-stack pool",
      {
        cniConfig: JSON.stringify({
          ipam: { type: "host-local", ranges: [[{ subnet: "10.20.0.0/16" }], [{ subnet: "fd00::/64" }]] },
        }),
      },
      { prefixLength: 24 },
      "pool",
      "INVALID_INPUT",
      /dual-stack pool/,
    ],
    [
      "a node network",
      { network: "10.42.0.0/16" },
      { prefixLength: 24 },
      "pool",
      "INVALID_INPUT",
      /node network/,
    ],
    [
      "a bad rule",
      { ranges: [{ subnet: "10.20.0.0/16" }], prefixLengths: { min: 28, max: 20 } },
      {},
      "pool.prefixLengths",
      "INVALID_INPUT",
      /min \/28 is longer than max \/20/,
    ],
  ])(
    "refuses %s at preview, under its property, with its code",
    async (_, pool, rest, property, code, reason) => {
      const { failures } = await prefixAllocationProvider.check({}, inputs(pool as PoolSpec, rest));
      expect(failures).toHaveLength(1);
      expect(failures![0]).toMatchObject({ property, code });
      expect(failures![0]!.reason).toMatch(reason);
    },
  );

  it("plans the rule's default, shows the block's outputs, and keeps it when the default changes", async () => {
    const { inputs: planned, failures } = await prefixAllocationProvider.check({}, inputs(v4));
    expect(failures ?? []).toEqual([]);
    // Not 10.20.0.0/24: it holds the network address and the gateway, which the range does not hand out.
    expect(planned).toMatchObject({
      cidr: "10.20.1.0/24",
      network: "10.20.1.0",
      prefixLength: 24,
      first: "10.20.1.1",
      last: "10.20.1.254",
      size: "256",
      poolId: POOL,
      owner: OWNER,
      ips: ["10.20.1.0/24"],
    });
    const again = await prefixAllocationProvider.check(
      planned,
      inputs({ ...v4, prefixLengths: { min: 20, max: 28, default: 26 } }),
    );
    expect(again.inputs.cidr).toBe("10.20.1.0/24");
  });

  it("keeps a held block whose length a tightened rule no longer allows; a new block is refused", async () => {
    const { inputs: planned } = await prefixAllocationProvider.check({}, inputs(v4, { prefixLength: 24 }));
    expect(planned.cidr).toBe("10.20.1.0/24");
    const tight = { ...v4, prefixLengths: { min: 26, max: 28 } };
    const kept = await prefixAllocationProvider.check(planned, inputs(tight, { prefixLength: 24 }));
    expect(kept.failures ?? []).toEqual([]);
    expect(kept.inputs.cidr).toBe("10.20.1.0/24");
    const fresh = await prefixAllocationProvider.check({}, inputs(tight, { prefixLength: 24 }));
    expect(fresh.failures?.[0]).toMatchObject({ property: "prefixLength", code: "PREFIX_NOT_ALLOWED" });
  });

  it("plans around the stack's held addresses and blocks", async () => {
    const held = (name: string, ips: string[], seq: number) => ({
      urn: `urn:pulumi:dev::proj::t::${name}`,
      type: "t",
      outputs: { poolId: POOL, owner: name, ips, seq },
    });
    const stack = fakeStack([held("a", ["10.20.0.0/24"], 1), held("b", ["10.20.1.5"], 2)]);
    const { inputs: planned } = await prefixAllocationProvider.check(
      {},
      { holder: { stack, owner: OWNER }, pool: { id: POOL, ...v4 } },
    );
    // Round-robin after the newest allocation (the address): the first free /24 after it.
    expect(planned.cidr).toBe("10.20.2.0/24");
  });
});

describe("block outputs and lengths", () => {
  it.each([
    ["10.20.3.0/24", { network: "10.20.3.0", first: "10.20.3.1", last: "10.20.3.254", size: "256" }],
    ["10.20.3.4/30", { network: "10.20.3.4", first: "10.20.3.5", last: "10.20.3.6", size: "4" }],
    ["10.20.3.4/31", { network: "10.20.3.4", first: "10.20.3.4", last: "10.20.3.5", size: "2" }],
    [
      "2001:db8:0:5::/64",
      {
        network: "2001:db8:0:5::",
        first: "2001:db8:0:5::",
        last: "2001:db8:0:5:ffff:ffff:ffff:ffff",
        size: "18446744073709551616",
      },
    ],
  ])("%s", (cidr, expected) => {
    expect(blockDetails(cidr)).toMatchObject({ cidr, ...expected });
  });

  it.each([
    [{ min: 16, max: 24 }, 16, undefined, 16],
    [{ min: 16, max: 24, default: 20 }, undefined, undefined, 20],
    [{ min: 16, max: 24, default: 20 }, undefined, "10.0.0.0/24", 24],
    [undefined, 30, undefined, 30],
  ])("rule %j, length %s, cidr %s: /%s", (rule, length, cidr, expected) => {
    const { pool } = resolvePool({
      ranges: [{ subnet: "10.0.0.0/8" }],
      ...(rule ? { prefixLengths: rule } : {}),
    });
    expect(blockLength(pool!, length, cidr)).toBe(expected);
  });
});
