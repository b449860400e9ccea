// A tenant's reference to a shared pool (`IpPool.shared`) as a checkpoint holds it: `shared: true`,
// its `ledger` and the `definition` it read from the ledger, and no ranges, cniConfig or network.
import { describe, expect, it } from "vitest";
import { CliError } from "../../provider/cli/cli-error";
import { poolUsages } from "../../provider/cli/pool-usage";
import { report, stackUsages } from "../../provider/cli/report-command";
import { stackPools } from "../../provider/cli/stack-pools";
import type { SnapshotResource, StackSnapshot } from "../../provider/cli/stack-snapshot";
import { styleFor } from "../../provider/cli/style";
import { poolDefinition } from "../../provider/resources/pool/canonical-definition";
import { poolSubnets, resolvePool, type PoolSpec } from "../../provider/resources/pool/pool-spec";

const types = "pulumi-nodejs:dynamic/egress-ipam:";
const urn = (type: string, name: string) => `urn:pulumi:dev::tenant::${types}${type}::${name}`;
const POOL = urn("IpPool", "shared");
const ledger = { kind: "kubernetes", name: "egress-prod", namespace: "ipam" };

/** The owner's pool, as its definition object stores it. */
const definitionOf = (spec: PoolSpec): string => poolDefinition(resolvePool(spec).pool!);

/** The reference after `pulumi up`: what IpPool.shared records in state. */
const reference = (definition: string | undefined): SnapshotResource => ({
  urn: POOL,
  type: `${types}IpPool`,
  inputs: { ledger, shared: true, stack: "acme/tenant/dev", poolId: POOL },
  outputs: {
    ledger,
    shared: true,
    stack: "acme/tenant/dev",
    poolId: POOL,
    ...(definition !== undefined ? { definition } : {}),
    ownedBy: "stack acme/net/prod (urn:pulumi:prod::net::pulumi-nodejs:dynamic/egress-ipam:IpPool::egress)",
    size: "252",
    free: "250",
    used: "2",
    quota: "8",
  },
});

const holder = (name: string, ip: string): SnapshotResource => ({
  urn: urn("IpAllocation", name),
  type: `${types}IpAllocation`,
  created: "2026-01-02T10:00:05Z",
  outputs: { poolId: POOL, owner: urn("IpAllocation", name), ips: [ip], seq: 1, stackId: "stack-tenant" },
});

const stackOf = (resources: SnapshotResource[]): StackSnapshot => ({
  stack: "acme/tenant/dev",
  resources,
  pendingCreates: [],
  deployments: [{ version: 1, kind: "update", start: Date.parse("2026-01-02T10:00:00Z"), end: 0 }],
});

describe("a stack with a reference to a shared pool", () => {
  it.each<[string, PoolSpec]>([
    [
      "a range with exclusions and reserved addresses",
      { ranges: [{ subnet: "10.70.0.0/24" }], exclude: ["10.70.0.128/25"], reserved: ["10.70.0.9"] },
    ],
    [
      "lowest-free with a rule for blocks",
      {
        ranges: [{ subnet: "10.0.0.0/8" }],
        strategy: "lowest-free",
        prefixLengths: { min: 16, max: 24, default: 16 },
      },
    ],
    [
      "dual stack",
      {
        cniConfig: JSON.stringify({
          cniVersion: "1.0.0",
          ipam: {
            type: "host-local",
            ranges: [[{ subnet: "10.1.0.0/24" }], [{ subnet: "2001:db8:1::/64" }]],
          },
        }),
      },
    ],
    ["a node network", { network: "10.42.0.0/16", static: { "node-z": "10.42.0.9" } }],
  ])("%s: the pool is the owner's definition, with its ledger", (_what, spec) => {
    const definition = definitionOf(spec);
    const [p] = stackPools(stackOf([reference(definition)]));
    expect(p!.id).toBe(POOL);
    expect(poolDefinition(p!.pool)).toBe(definition);
    expect(p!.ledger).toMatchObject({ name: "egress-prod", namespace: "ipam" });
  });

  it("report --stack: the owner's ranges and counts, the stack's holders in it", () => {
    const definition = definitionOf({ ranges: [{ subnet: "10.70.0.0/24" }], exclude: ["10.70.0.128/25"] });
    const snapshot = stackOf([reference(definition), holder("a", "10.70.0.2"), holder("b", "10.70.0.3")]);
    const [u] = poolUsages(snapshot);
    expect(u).toMatchObject({
      pool: POOL,
      name: "shared",
      size: "126",
      held: "2",
      free: "124",
      excluded: "127",
    });
    expect(u!.holders.map((h) => [h.ip, h.owner])).toEqual([
      ["10.70.0.2", urn("IpAllocation", "a")],
      ["10.70.0.3", urn("IpAllocation", "b")],
    ]);
    expect(poolSubnets(stackPools(snapshot)[0]!.pool.rangeSets)).toEqual(["10.70.0.0/24"]);
    const text = report(
      { kind: "stack", name: snapshot.stack },
      stackUsages(snapshot, "shared"),
      {},
      styleFor({ isTTY: false }, {}),
    );
    expect(text).toContain("  range     10.70.0.1-10.70.0.254 in 10.70.0.0/24, gateway 10.70.0.1");
  });

  it.each<[string, SnapshotResource, RegExp]>([
    [
      "no definition recorded (a create interrupted before its outputs)",
      { ...reference(undefined), outputs: {} },
      /shared pool reference urn:\S+::shared in the checkpoint of stack "acme\/tenant\/dev" has no definition recorded.*pulumi refresh/,
    ],
    [
      "a definition that is not JSON",
      reference("{not json"),
      /shared pool reference urn:\S+::shared .*not a pool definition.*pulumi refresh/,
    ],
    [
      "a definition that is no valid pool",
      reference(
        JSON.stringify({
          ranges: [[{ subnet: "10.0.0.0/33" }]],
          exclude: [],
          reserved: [],
          strategy: "round-robin",
        }),
      ),
      /stored pool definition is not valid/,
    ],
  ])("%s: one CliError naming the reference (exit 2, INVALID_STATE)", (_what, resource, why) => {
    const run = () => stackPools(stackOf([resource]));
    expect(run).toThrow(CliError);
    expect(run).toThrow(why);
    try {
      run();
    } catch (e) {
      expect(e).toMatchObject({ exitCode: 2, code: "INVALID_STATE" });
    }
  });

  it("a pool of the stack's own beside it is still read from its spec", () => {
    const own: SnapshotResource = {
      urn: urn("IpPool", "local"),
      type: `${types}IpPool`,
      outputs: { poolId: urn("IpPool", "local"), ranges: [{ subnet: "192.168.0.0/24" }] },
    };
    const pools = stackPools(
      stackOf([reference(definitionOf({ ranges: [{ subnet: "10.70.0.0/24" }] })), own]),
    );
    expect(pools.map((p) => [p.id, poolSubnets(p.pool.rangeSets), p.ledger !== undefined])).toEqual([
      [POOL, ["10.70.0.0/24"], true],
      [urn("IpPool", "local"), ["192.168.0.0/24"], false],
    ]);
  });
});
