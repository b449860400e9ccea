import { describe, expect, it } from "vitest";
import { poolUsages } from "../../provider/cli/pool-usage";
import type { SnapshotResource, StackSnapshot } from "../../provider/cli/stack-snapshot";

const POOL = "urn:pulumi:s::p::pulumi-nodejs:dynamic/egress-ipam:IpPool::net";
const cniConfig = JSON.stringify({
  cniVersion: "1.0.0",
  name: "net",
  ipam: { type: "host-local", ranges: [[{ subnet: "10.1.0.0/24" }], [{ subnet: "2001:db8:1::/64" }]] },
});
const holder = (name: string, ips: string[], extra: Partial<SnapshotResource> = {}): SnapshotResource => ({
  urn: `urn:pulumi:s::p::pulumi-nodejs:dynamic/egress-ipam:IpAllocation::${name}`,
  type: "pulumi-nodejs:dynamic/egress-ipam:IpAllocation",
  created: "2026-01-02T10:00:05Z",
  outputs: { allocation: { pool: POOL, owner: `urn:…::${name}`, ips, seq: 1 } },
  ...extra,
});

const snapshot: StackSnapshot = {
  stack: "o/p/s",
  resources: [
    {
      urn: POOL,
      type: "pulumi-nodejs:dynamic/egress-ipam:IpPool",
      outputs: { poolId: POOL, cniConfig, exclude: ["10.1.0.128/25"] },
    },
    holder("a", ["10.1.0.2", "2001:db8:1::2"]),
    // The old copy of a replaced holder, not deleted yet: its addresses are still taken.
    holder("b", ["10.1.0.3", "2001:db8:1::3"], { delete: true }),
    // Another pool's holder does not count here.
    {
      ...holder("c", ["10.1.0.4"]),
      outputs: { allocation: { pool: "urn:other", owner: "c", ips: ["10.1.0.4"], seq: 1 } },
    },
  ],
  pendingCreates: [
    { ...holder("d", []), outputs: undefined, inputs: holder("d", ["10.1.0.5", "2001:db8:1::5"]).outputs },
  ],
  deployments: [{ version: 1, kind: "update", start: Date.parse("2026-01-02T10:00:00Z"), end: 0 }],
};

describe("poolUsages", () => {
  const [usage] = poolUsages(snapshot);

  it("names the resource that carries each record as its holder (a rename with an alias keeps its old name's record)", () => {
    const renamed = { ...holder("a2", ["10.1.0.2"]), outputs: holder("a", ["10.1.0.2"]).outputs };
    const [u] = poolUsages({ ...snapshot, resources: [snapshot.resources[0]!, renamed], pendingCreates: [] });
    expect(u!.holders.map((h) => h.owner)).toEqual([renamed.urn]);
  });

  it("counts a dual-stack pool over both families, interrupted creates as planned, copies pending deletion as held", () => {
    // IPv4: .1-.254 minus the gateway minus .128-.254 excluded = 126; IPv6: 2^64 - 1 minus the gateway.
    const v4 = 126n;
    const v6 = (1n << 64n) - 2n;
    expect(usage).toMatchObject({
      name: "net",
      size: (v4 + v6).toString(),
      held: "4",
      planned: "2",
      free: (v4 + v6 - 6n).toString(),
      excluded: "127",
      gateways: "2",
    });
    expect(usage!.holders.map((h) => [h.ip, h.state, h.sinceVersion])).toEqual([
      ["10.1.0.2", "held", 1],
      ["10.1.0.3", "deleting", 1],
      ["10.1.0.5", "planned", 1],
      ["2001:db8:1::2", "held", 1],
      ["2001:db8:1::3", "deleting", 1],
      ["2001:db8:1::5", "planned", 1],
    ]);
  });

  it("maps each family's subnet with its own cells", () => {
    expect(usage!.maps.map((m) => m.subnet)).toEqual(["10.1.0.0/24", "2001:db8:1::/64"]);
    const [v4, v6] = usage!.maps;
    const first = (m: typeof v4) => (m!.lines[0]!.kind === "row" ? m!.lines[0]!.cells.slice(0, 7) : []);
    expect(first(v4)).toEqual(["outside", "gateway", "held", "held", "free", "planned", "free"]);
    expect(first(v6)).toEqual(["outside", "gateway", "held", "held", "free", "planned", "free"]);
  });

  it("selects pools by name", () => {
    expect(poolUsages(snapshot, (name) => name === "other")).toEqual([]);
  });
});

describe("a node network pool (webmesh node addresses)", () => {
  const MESH = "urn:pulumi:s::p::pulumi-nodejs:dynamic/egress-ipam:IpPool::mesh";
  const node = holder("node-a", ["10.42.0.2"]);
  node.outputs = {
    poolId: MESH,
    owner: node.urn,
    ips: ["10.42.0.2"],
    seq: 1,
    nodeId: "node-a",
    prefix: "10.42.0.2/32",
  };
  const mesh: StackSnapshot = {
    ...snapshot,
    resources: [
      {
        urn: MESH,
        type: "pulumi-nodejs:dynamic/egress-ipam:IpPool",
        outputs: { poolId: MESH, network: "10.42.0.0/16", static: { "node-z": "10.42.0.9" } },
      },
      node,
    ],
    pendingCreates: [],
  };

  it("is reported with its network and node addresses, not refused as a pool without ranges", () => {
    const [u] = poolUsages(mesh);
    expect(u).toMatchObject({ name: "mesh", held: "1" });
    expect(u!.holders.map((h) => h.ip)).toEqual(["10.42.0.2"]);
    expect(u!.maps.map((m) => m.subnet)).toEqual(["10.42.0.0/16"]);
  });
});
