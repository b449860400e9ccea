import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ipPoolProvider } from "../../../provider/resources/ip-pool/ip-pool-provider";

const POOL = "urn:pulumi:dev::proj::pulumi-nodejs:dynamic/egress-ipam:IpPool::pool";
let n = 0;

// A stand-in for `pulumi stack export` printing the given resources: the provider reads the
// taken set through the CLI named by PULUMI_EGRESS_IPAM_CLI.
function fakeStack(resources: unknown[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pool-provider-"));
  const cli = path.join(dir, "pulumi");
  const json = JSON.stringify({ version: 3, deployment: { resources } });
  fs.writeFileSync(cli, `#!/bin/sh\ncat <<'JSON'\n${json}\nJSON\n`, { mode: 0o755 });
  process.env.PULUMI_EGRESS_IPAM_CLI = cli;
  return `org/proj/provider-${n++}`; // a fresh stack: books are per stack and process
}
afterEach(() => delete process.env.PULUMI_EGRESS_IPAM_CLI);

const holder = (name: string, ip: string) => {
  const owner = `urn:pulumi:dev::proj::pulumi-nodejs:dynamic/egress-ipam:IpAllocation::${name}`;
  return { urn: owner, type: "t", outputs: { allocation: { pool: POOL, owner, ips: [ip], seq: 1 } } };
};

describe("IpPool provider", () => {
  it("reports every input problem at check, each under its property", async () => {
    const news = {
      ranges: [{ subnet: "10.0.8.1/24" }, { subnet: "10.0.9.0/24", rangeEnd: "10.0.10.1" }],
      exclude: ["10.0.8.0/33"],
      reserved: ["not-an-ip-either"],
      strategy: "random",
      cloudReserved: "gcp",
    };
    const { failures } = await ipPoolProvider.check({}, news);
    const byProperty = Object.fromEntries(failures!.map((f) => [f.property, f.reason]));
    expect(Object.keys(byProperty).sort()).toEqual([
      "cloudReserved",
      "exclude[0]",
      "ranges[0]",
      "ranges[1]",
      "reserved[0]",
      "strategy",
    ]);
    expect(byProperty["ranges[0]"]).toContain("10.0.8.0/24");
    expect(byProperty["ranges[1]"]).toContain("10.0.10.1");
    expect(byProperty["exclude[0]"]).toContain("10.0.8.0/33");
    expect(byProperty.strategy).toContain('"random"');
    expect(byProperty["reserved[0]"]).toContain("not-an-ip-either");
  });

  it.each([
    ["neither ranges nor cniConfig", {}, "ranges", /exactly one of/, "INVALID_INPUT"],
    [
      "both ranges and cniConfig",
      { ranges: [{ subnet: "10.0.0.0/24" }], cniConfig: "{}" },
      "ranges",
      /exactly one/,
      "INVALID_INPUT",
    ],
    [
      "overlapping ranges",
      { ranges: [{ subnet: "10.0.0.0/24" }, { subnet: "10.0.0.0/25" }] },
      "ranges",
      /overlap/,
      "OVERLAPPING_RANGES",
    ],
    [
      "a CNI range set that mixes families",
      {
        cniConfig: JSON.stringify({
          cniVersion: "1.0.0",
          name: "n",
          ipam: { type: "host-local", ranges: [[{ subnet: "10.0.0.0/24" }, { subnet: "2001:db8::/64" }]] },
        }),
      },
      "cniConfig",
      /famil/i,
      "MIXED_FAMILIES",
    ],
    [
      "a reserved IP outside the ranges",
      { ranges: [{ subnet: "10.0.0.0/24" }], reserved: ["10.0.1.1"] },
      "reserved[0]",
      /10\.0\.1\.1 is outside/,
      "NOT_IN_RANGE",
    ],
    [
      "a CNI config without ipam",
      { cniConfig: '{"cniVersion":"1.0.0","name":"n"}' },
      "cniConfig",
      /ipam/,
      "INVALID_CONFIG",
    ],
  ])("refuses %s", async (_what, news, property, reason, code) => {
    const { failures } = await ipPoolProvider.check({}, news);
    expect(failures).toEqual([{ property, reason: expect.stringMatching(reason), code }]);
  });

  it("makes ranges of both families a dual-stack pool: one range set per family", async () => {
    const inputs = {
      ranges: [{ subnet: "10.0.0.0/24" }, { subnet: "2001:db8::/120" }, { subnet: "10.0.1.0/24" }],
      stack: "org/proj/dev",
      poolId: POOL,
    };
    expect((await ipPoolProvider.check({}, inputs)).failures).toEqual([]);
    const { outs } = await ipPoolProvider.create(inputs);
    expect(outs.rangeSets).toHaveLength(2);
  });

  it("accepts a dual-stack CNI config and sizes an IPv6 /64 without enumerating it", async () => {
    const cniConfig = JSON.stringify({
      cniVersion: "1.0.0",
      name: "net",
      ipam: { type: "host-local", ranges: [[{ subnet: "10.1.0.0/24" }], [{ subnet: "2001:db8:1::/64" }]] },
    });
    const inputs = { cniConfig, stack: "org/proj/dev", poolId: POOL };
    expect((await ipPoolProvider.check({}, inputs)).failures).toEqual([]);
    const { outs } = await ipPoolProvider.create(inputs);
    expect(outs.size).toBe((253n + 2n ** 64n - 2n).toString());
    expect(outs.rangeSets).toHaveLength(2);
  });

  it("refuses deletion while addresses are held, naming the holders", async () => {
    const stack = fakeStack([holder("web", "10.0.8.5"), holder("api", "10.0.8.6")]);
    const props = { ranges: [{ subnet: "10.0.8.0/24" }], stack, poolId: POOL };
    await expect(ipPoolProvider.delete("pool", props)).rejects.toThrow(
      /still has allocations: 10\.0\.8\.5 \(held by .*::web\), 10\.0\.8\.6 \(held by .*::api\)/,
    );
  });

  it("deletes a pool nobody holds addresses from", async () => {
    const stack = fakeStack([holder("elsewhere", "10.0.8.5")].map((r) => ({ ...r, outputs: {} })));
    await expect(ipPoolProvider.delete("pool", { stack, poolId: POOL })).resolves.toBeUndefined();
  });

  it("refuses an update that strands a holder, and allows one that keeps it inside", async () => {
    const stack = fakeStack([holder("web", "10.0.8.200")]);
    const olds = { ranges: [{ subnet: "10.0.8.0/24" }], stack, poolId: POOL };
    const shrunk = { ...olds, ranges: [{ subnet: "10.0.8.0/25" }] };
    const excluded = { ...olds, exclude: ["10.0.8.192/26"] };
    for (const news of [shrunk, excluded]) {
      const { failures } = await ipPoolProvider.check(olds, news);
      expect(failures?.[0]?.reason).toMatch(/10\.0\.8\.200 \(held by .*::web\)/);
      await expect(ipPoolProvider.update("pool", olds, news)).rejects.toThrow(/10\.0\.8\.200/);
    }
    const grown = { ...olds, ranges: [{ subnet: "10.0.8.0/24" }, { subnet: "10.0.9.0/24" }] };
    expect((await ipPoolProvider.check(olds, grown)).failures).toEqual([]);
    expect((await ipPoolProvider.update("pool", olds, grown)).outs?.size).toBe("506");
  });
});
