// NodePlanner's choice, over a fixed Node list (the Kubernetes calls are the kube tests' job):
// least loaded first, one address of a group (a platform object) per Node, capacity and subnet respected.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { KubeClients } from "../../../provider/kube/kube-config";
import { NodePlanner, type AddressLocations } from "../../../provider/provisioners/kubernetes/node-planner";
import { NodeInventory } from "../../../provider/provisioners/kubernetes/nodes";
import type { AddressGroup } from "../../../provider/provisioners/kubernetes/node-planner";

const ipconfig = (subnet: string, capacity: number) =>
  JSON.stringify([{ interface: "eth0", ifaddr: { ipv4: subnet }, capacity: { ipv4: capacity } }]);

function planner(nodes: { name: string; zone: string; ready?: boolean; egress?: string }[]): NodePlanner {
  const items = nodes.map((n) => ({
    metadata: {
      name: n.name,
      labels: { "topology.kubernetes.io/zone": n.zone },
      annotations: n.egress ? { "cloud.network.openshift.io/egress-ipconfig": n.egress } : {},
    },
    spec: {},
    status: { conditions: [{ type: "Ready", status: n.ready === false ? "False" : "True" }] },
  }));
  const kube = {
    core: { listNode: async () => ({ items }) },
    server: "https://test",
    context: "test",
  } as unknown as KubeClients;
  return new NodePlanner(
    kube,
    new NodeInventory(kube, { nodeSelector: {}, zoneLabel: "topology.kubernetes.io/zone" }),
  );
}
const group = (key: string): AddressGroup => ({ key, name: `object ${key}`, rule: `one of ${key}'s a Node` });
const none = (): AddressLocations => ({ nodeOf: new Map(), groupOf: new Map() });

describe("NodePlanner.choose", () => {
  it.each([
    ["the least loaded node", { "10.0.0.1": "n1" }, "n2"],
    ["not the NotReady node however empty", { "10.0.0.1": "n1", "10.0.0.2": "n2", "10.0.0.3": "n2" }, "n1"],
  ])("plans %s", async (_what, placed, expected) => {
    const p = planner([
      { name: "n1", zone: "a" },
      { name: "n2", zone: "a" },
      { name: "n3", zone: "a", ready: false },
    ]);
    const placements = { nodeOf: new Map(Object.entries(placed)), groupOf: new Map<string, string>() };
    expect(await p.choose({ zone: "a", ip: "10.0.0.9", locations: placements })).toBe(expected);
  });

  it("breaks a tie by the address, the same way whatever was planned before (preview and up agree)", async () => {
    const nodes = [
      { name: "n1", zone: "a" },
      { name: "n2", zone: "a" },
      { name: "n3", zone: "a" },
    ];
    const ips = Array.from({ length: 12 }, (_, i) => `10.0.0.${i + 1}`);
    const forward = planner(nodes);
    const backward = planner(nodes);
    const a = await Promise.all(ips.map((ip) => forward.choose({ zone: "a", ip, locations: none() })));
    const b = (
      await Promise.all([...ips].reverse().map((ip) => backward.choose({ zone: "a", ip, locations: none() })))
    ).reverse();
    expect(a).toEqual(b);
    expect(new Set(a).size).toBeGreaterThan(1); // spread, not all on one node
  });

  it("keeps its own address out of the load it compares (a re-plan of a placed address)", async () => {
    const p = planner([
      { name: "n1", zone: "a" },
      { name: "n2", zone: "a" },
    ]);
    const nodeOf = new Map([
      ["10.0.0.9", "n1"],
      ["10.0.0.8", "n2"],
    ]);
    expect(await p.choose({ zone: "a", ip: "10.0.0.9", locations: { nodeOf, groupOf: new Map() } })).toBe(
      "n1",
    );
  });

  it("never plans two addresses of one group on a node, and never beyond capacity or outside the subnet", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ ns: fc.constantFrom("x", "y", "z"), zone: fc.constantFrom("a", "b") }), {
          maxLength: 30,
        }),
        async (requests) => {
          const p = planner([
            { name: "a1", zone: "a", egress: ipconfig("10.0.0.0/16", 3) },
            { name: "a2", zone: "a", egress: ipconfig("10.0.0.0/16", 2) },
            { name: "a3", zone: "a", egress: ipconfig("10.9.0.0/16", 9) }, // wrong subnet for every address
            { name: "b1", zone: "b" },
          ]);
          const placed: { ns: string; node: string }[] = [];
          for (const [i, r] of requests.entries()) {
            const node = await p
              .choose({ zone: r.zone, ip: `10.0.0.${i + 1}`, group: group(r.ns), locations: none() })
              .catch(() => undefined);
            if (node) placed.push({ ns: r.ns, node });
            const twice = placed.filter((q) => q.ns === r.ns && q.node === node);
            expect(twice.length).toBeLessThanOrEqual(1);
          }
          expect(placed.filter((q) => q.node === "a1").length).toBeLessThanOrEqual(3);
          expect(placed.filter((q) => q.node === "a2").length).toBeLessThanOrEqual(2);
          expect(placed.some((q) => q.node === "a3")).toBe(false);
          // Refused only when no node could take it: per zone, at most one address of a group per node.
          for (const zone of ["a", "b"]) {
            for (const ns of ["x", "y", "z"]) {
              const asked = requests.filter((r) => r.zone === zone && r.ns === ns).length;
              const got = placed.filter((q) => q.ns === ns && q.node.startsWith(zone)).length;
              if (zone === "b") expect(got).toBe(Math.min(asked, 1));
              else expect(got).toBeLessThanOrEqual(2);
            }
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("says why each node of the zone was passed over", async () => {
    const p = planner([
      { name: "a1", zone: "a", egress: ipconfig("10.0.0.0/24", 1) },
      { name: "a2", zone: "a", ready: false },
      { name: "a3", zone: "a", egress: ipconfig("10.9.0.0/24", 4) },
    ]);
    await p.choose({ zone: "a", ip: "10.0.0.1", group: group("x"), locations: none() });
    await expect(
      p.choose({ zone: "a", ip: "10.0.0.2", group: group("y"), locations: none() }),
    ).rejects.toThrow(
      'no eligible node in failure domain "a" on https://test (kubeconfig context "test"): ' +
        "a1 (full: 1 of 1 egress IPs), a2 (NotReady), a3 (10.0.0.2 is outside its egress subnet 10.9.0.0/24)",
    );
  });

  it("names the group a zone's only Node already carries an address of, and the group's way on", async () => {
    const p = planner([{ name: "a1", zone: "a" }]);
    await p.choose({ zone: "a", ip: "10.0.0.1", group: group("x"), locations: none() });
    await expect(
      p.choose({ zone: "a", ip: "fd00::1", group: group("x"), locations: none() }),
    ).rejects.toThrow(
      'no eligible node in failure domain "a" on https://test (kubeconfig context "test"): ' +
        "a1 (already carries 10.0.0.1 of object x); one of x's a Node; or make a Node there Ready and schedulable",
    );
    // Another group's address does not keep it off the Node.
    expect(await p.choose({ zone: "a", ip: "fd00::2", group: group("y"), locations: none() })).toBe("a1");
  });
});
