// Many EgressIps placed at once with ocp-static: 30 EgressIps of 5 namespaces over 6 nodes at
// --parallel 16, while another writer keeps adding its own addresses to the same HostSubnets.
// (OpenShift SDN allows one address of a namespace per node, so 6 nodes carry at most 6 addresses
// of a namespace: 30 addresses need at least 5 namespaces.)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";
import { testKubeconfig } from "../support/kube";
import { foreignAdd, hostSubnetIps, netNamespaceIps, sdnWorld, type SdnWorld } from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
const nodeKeys = ["n1", "n2", "n3", "n4", "n5", "n6"] as const;
const nsKeys = ["s1", "s2", "s3", "s4", "s5"] as const;

describe("ocp-static: 30 EgressIps of 5 namespaces over 6 nodes at --parallel 16", () => {
  const h = Harness.create("ocp-static-many", { env: { KUBECONFIG: testKubeconfig() } });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  let w: SdnWorld<(typeof nodeKeys)[number], (typeof nsKeys)[number]>;

  beforeAll(async () => {
    w = await sdnWorld(Object.fromEntries(nodeKeys.map((k) => [k, { zone: "a" }])) as never, [...nsKeys]);
    await h.program(async () => {
      const provisioner = { kind: "ocp-static" as const, nodeSelector: w.selector };
      const pool = new IpPool("egress", { ranges: [{ subnet: "10.24.0.0/24", rangeStart: "10.24.0.10" }] });
      for (let i = 0; i < 30; i++) {
        const ns = nsKeys[i % nsKeys.length]!;
        new EgressIp(`e${i}`, { pool, namespace: w.ns[ns], failureDomains: [w.zone("a")], provisioner });
      }
    });
  });
  afterAll(async () => {
    h.dispose();
    await w?.cleanup();
  });

  it("never puts two addresses of a namespace on a node and loses no HostSubnet write", async () => {
    let stop = false;
    const foreign: Record<string, string[]> = {};
    const writer = (async () => {
      // Through the whole up: a write every 300 ms, at most 200.
      for (let round = 0; !stop && round < 200; round++) {
        const key = nodeKeys[round % nodeKeys.length]!;
        const ip = `10.24.${1 + Math.floor(round / 100)}.${10 + (round % 100)}`; // outside the pool
        await foreignAdd(w.node[key], ip);
        (foreign[key] ??= []).push(ip);
        await new Promise((r) => setTimeout(r, 300));
      }
    })();
    const up = await h.up({ parallel: 16 });
    stop = true;
    await writer;
    expect(Object.keys(changesOf(up.summary.resourceChanges))).toEqual(["create"]);

    const perNode: Record<string, string[]> = {};
    for (const k of nodeKeys) perNode[k] = await hostSubnetIps(w.node[k]);
    const ours = Object.values(perNode)
      .flat()
      .filter((ip) => ip.startsWith("10.24.0."));
    expect(ours).toHaveLength(30);
    expect(new Set(ours).size).toBe(30);
    // Every foreign write survived ours, and ours survived the foreign writer's.
    const foreignWrites = Object.values(foreign).flat().length;
    console.log(`foreign HostSubnet writes during up: ${foreignWrites}`);
    expect(foreignWrites).toBeGreaterThan(nodeKeys.length);
    for (const k of nodeKeys) {
      expect([...perNode[k]!].filter((ip) => !ip.startsWith("10.24.0.")).sort()).toEqual(
        [...(foreign[k] ?? [])].sort(),
      );
    }

    const namespaceOf = new Map<string, string>();
    for (const ns of nsKeys) {
      const ips = await netNamespaceIps(w.ns[ns]);
      expect(ips).toHaveLength(6);
      for (const ip of ips) namespaceOf.set(ip, ns);
    }
    for (const k of nodeKeys) {
      const namespaces = perNode[k]!.filter((ip) => ip.startsWith("10.24.0.")).map((ip) =>
        namespaceOf.get(ip),
      );
      expect(namespaces.sort()).toEqual([...nsKeys]); // one address of each namespace, none twice
    }
    expect(changesOf((await h.up({ parallel: 16 })).summary.resourceChanges)).toEqual({});
  }, 600_000);

  it("leaves only the other writer's addresses on destroy", async () => {
    await h.destroy({ parallel: 16 });
    for (const k of nodeKeys) {
      expect((await hostSubnetIps(w.node[k])).filter((ip) => ip.startsWith("10.24.0."))).toEqual([]);
    }
    for (const ns of nsKeys) expect(await netNamespaceIps(w.ns[ns])).toEqual([]);
  }, 600_000);
});
