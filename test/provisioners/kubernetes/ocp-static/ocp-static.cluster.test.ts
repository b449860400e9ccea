// The ocp-static provisioner against the real kube-apiserver of the test cluster: HostSubnet and
// NetNamespace writes, the OpenShift SDN rules, observed usage, and no lost update under contention.
import type * as k8s from "@kubernetes/client-node";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createProvisioner } from "../../../../provider/provisioners/factory/create-provisioner";
import { plannerFor } from "../../../../provider/provisioners/kubernetes/node-planner";
import type { OcpStaticProvisionerConfig } from "../../../../provider/provisioners/config/kube-provisioner-config";
import { kube, setNodeReady } from "../../../support/kube";
import {
  foreignAdd,
  hostSubnetIps,
  netNamespaceIps,
  sdnWorld,
  setHostSubnetIps,
  type SdnWorld,
} from "../../../support/sdn-world";
import { denyWrites } from "../../../support/write-denial";

describe("ocp-static provisioner (real kube-apiserver)", () => {
  let w: SdnWorld<"a1" | "a2" | "a3" | "a4" | "b1" | "c1", "x" | "y" | "z">;
  let config: OcpStaticProvisionerConfig;
  const forNs = (key: "x" | "y" | "z") => createProvisioner({ ...config, namespace: w.ns[key] });
  const fresh = () => {
    const planner = plannerFor(config);
    planner.invalidate();
    planner.nodes.invalidate();
  };

  beforeAll(async () => {
    w = await sdnWorld(
      {
        a1: { zone: "a", hostSubnet: { egressIPs: ["10.0.1.200"] } }, // a foreign address
        a2: { zone: "a" },
        a3: { zone: "a", hostSubnet: { egressCIDRs: ["10.0.9.0/24"] } }, // automatic mode
        a4: { zone: "a", hostSubnet: false }, // not part of the SDN
        b1: { zone: "b" },
        c1: { zone: "c", ready: false },
      },
      ["x", "y", "z"],
    );
    config = { kind: "ocp-static", nodeSelector: w.selector };
  });
  afterAll(() => w?.cleanup());

  it("plans the least loaded node, never a second address of one namespace on a node", async () => {
    const x = forNs("x");
    // a1 carries a foreign address, so a2 is the least loaded; a3 (egressCIDRs) and a4 (no HostSubnet) never.
    expect(await x.findHostForIP!("10.0.1.10", w.zone("a"))).toBe(w.node.a2);
    // Namespace x has 10.0.1.10 planned on a2: its next address goes to a1 although a1 is loaded.
    expect(await x.findHostForIP!("10.0.1.11", w.zone("a"))).toBe(w.node.a1);
    // A third address of x has no node left in the zone: the error says why for each node.
    const third = x.findHostForIP!("10.0.1.12", w.zone("a"));
    await expect(third).rejects.toThrow(`no eligible node in failure domain "${w.zone("a")}"`);
    await expect(third).rejects.toThrow(/already carries 10\.0\.1\.1[01] of NetNamespace /);
    await expect(third).rejects.toThrow(/egressCIDRs 10\.0\.9\.0\/24 \(automatic mode\)/);
    await expect(third).rejects.toThrow(/no HostSubnet/);
    // Another namespace may use the node x uses.
    expect(await forNs("y").findHostForIP!("10.0.1.13", w.zone("a"))).toBe(w.node.a2);
  });

  it("refuses a domain whose nodes are all NotReady, and a domain no node is in", async () => {
    await expect(forNs("x").findHostForIP!("10.0.3.10", w.zone("c"))).rejects.toThrow(
      new RegExp(`no eligible node in failure domain "${w.zone("c")}".*${w.node.c1} \\(NotReady\\)`),
    );
    await expect(forNs("x").findHostForIP!("10.0.3.10", "nowhere")).rejects.toThrow(
      /no Node with labels egress-test\/.* has topology\.kubernetes\.io\/zone=nowhere/,
    );
  });

  it("puts an address on the HostSubnet and the NetNamespace, reads it back, and takes it off", async () => {
    const x = forNs("x");
    await x.addSpecifiedIP("10.0.2.10", w.node.b1);
    await x.addSpecifiedIP("10.0.2.10", w.node.b1); // idempotent
    expect(await hostSubnetIps(w.node.b1)).toEqual(["10.0.2.10"]);
    expect(await netNamespaceIps(w.ns.x)).toEqual(["10.0.2.10"]);
    await x.checkIP("10.0.2.10", w.node.b1);

    await setHostSubnetIps(w.node.b1, []); // removed behind our back
    await expect(x.checkIP("10.0.2.10", w.node.b1)).rejects.toThrow(
      `egress IP 10.0.2.10 is not on HostSubnet ${w.node.b1}; run pulumi up to put it back`,
    );
    await x.addSpecifiedIP("10.0.2.10", w.node.b1);
    await x.removeIP("10.0.2.10", w.node.b1);
    await x.removeIP("10.0.2.10", w.node.b1); // already gone: fine
    expect(await hostSubnetIps(w.node.b1)).toEqual([]);
    expect(await netNamespaceIps(w.ns.x)).toEqual([]);
  });

  it("refuses an address another HostSubnet or NetNamespace has, and a second address of the namespace on a node", async () => {
    await expect(forNs("x").addSpecifiedIP("10.0.1.200", w.node.a2)).rejects.toThrow(
      `cannot put 10.0.1.200 on node ${w.node.a2}: HostSubnet ${w.node.a1} already has it`,
    );
    await forNs("y").addSpecifiedIP("10.0.2.20", w.node.b1);
    await expect(forNs("z").addSpecifiedIP("10.0.2.20", w.node.b1)).rejects.toThrow(
      `cannot give 10.0.2.20 to namespace ${w.ns.z}: NetNamespace ${w.ns.y} already has it`,
    );
    await expect(forNs("y").addSpecifiedIP("10.0.2.21", w.node.b1)).rejects.toThrow(
      `node ${w.node.b1} already carries 10.0.2.20 of namespace ${w.ns.y}`,
    );
    await expect(forNs("y").addSpecifiedIP("10.0.9.5", w.node.a3)).rejects.toThrow(
      /HostSubnet .* has egressCIDRs/,
    );
    expect(await netNamespaceIps(w.ns.y)).toEqual(["10.0.2.20"]);
    await forNs("y").removeIP("10.0.2.20", w.node.b1);
  });

  it("moves an address from one HostSubnet to another", async () => {
    const x = forNs("x");
    await x.addSpecifiedIP("10.0.1.30", w.node.a2);
    await x.moveIP("10.0.1.30", w.node.a2, w.node.a1);
    expect(await hostSubnetIps(w.node.a2)).toEqual([]);
    expect(await hostSubnetIps(w.node.a1)).toEqual(["10.0.1.200", "10.0.1.30"]);
    expect(await netNamespaceIps(w.ns.x)).toEqual(["10.0.1.30"]);
    await x.removeIP("10.0.1.30", w.node.a1);
    expect(await hostSubnetIps(w.node.a1)).toEqual(["10.0.1.200"]);
  });

  it("refuses an address another writer gave the namespace, and leaves that writer's HostSubnet entry", async () => {
    const ip = "10.0.2.60";
    await setHostSubnetIps(w.node.b1, [ip]);
    const { objects } = kube();
    const nn = await objects.read({
      apiVersion: "network.openshift.io/v1",
      kind: "NetNamespace",
      metadata: { name: w.ns.z },
    });
    await objects.replace({ ...nn, egressIPs: [ip] } as k8s.KubernetesObject);
    const owned = createProvisioner({ ...config, namespace: w.ns.z, owner: "stack-1 urn:a" });
    const add = owned.addSpecifiedIP(ip, w.node.b1);
    await expect(add).rejects.toThrow(
      `NetNamespace ${w.ns.z} already lists ${ip} (not recorded as written by this package)`,
    );
    await expect(add).rejects.toThrow(`${ip} stays on HostSubnet ${w.node.b1}, where it was before`);
    expect(await hostSubnetIps(w.node.b1)).toEqual([ip]);
    expect(await netNamespaceIps(w.ns.z)).toEqual([ip]);
    // Taken over with adopt, it is this owner's: its removal takes it off both.
    const adopting = createProvisioner({
      ...config,
      namespace: w.ns.z,
      owner: "stack-1 urn:a",
      adoptPresent: true,
    });
    await adopting.addSpecifiedIP(ip, w.node.b1);
    await adopting.removeIP(ip, w.node.b1);
    expect(await hostSubnetIps(w.node.b1)).toEqual([]);
    expect(await netNamespaceIps(w.ns.z)).toEqual([]);
  });

  describe("a move with a write refused (injected: a ValidatingAdmissionPolicy denies it)", () => {
    const net = "network.openshift.io";
    const ip = "10.0.1.40";
    const carriers = async () => {
      const nodes = [w.node.a1, w.node.a2, w.node.a3, w.node.b1];
      const lists = await Promise.all(nodes.map((n) => hostSubnetIps(n)));
      return nodes.filter((_, i) => lists[i]!.includes(ip));
    };
    const setNetNamespaceIps = async (ns: string, ips: string[]) => {
      const { objects } = kube();
      const o = await objects.read({ apiVersion: `${net}/v1`, kind: "NetNamespace", metadata: { name: ns } });
      await objects.replace({ ...o, egressIPs: ips } as k8s.KubernetesObject);
    };
    const denials: (() => Promise<void>)[] = [];
    const deny = async (d: Parameters<typeof denyWrites>[0]) => denials.push(await denyWrites(d));
    beforeEach(async () => {
      await forNs("x").addSpecifiedIP(ip, w.node.a2);
      fresh();
    });
    afterEach(async () => {
      for (const undo of denials.splice(0)) await undo();
      for (const node of await carriers()) await forNs("x").removeIP(ip, node);
      fresh();
    });

    it("the NetNamespace write: the address stays on the old HostSubnet only, and the error says so", async () => {
      await setNetNamespaceIps(w.ns.x, []); // taken off the NetNamespace behind our back: the move writes it
      await deny({ group: net, resource: "netnamespaces", name: w.ns.x });
      const move = forNs("x").moveIP(ip, w.node.a2, w.node.a1);
      await expect(move).rejects.toThrow(/injected failure/);
      await expect(move).rejects.toThrow(`${ip} is on HostSubnet ${w.node.a2} only, as before`);
      expect(await carriers()).toEqual([w.node.a2]);
    });

    it("the new HostSubnet's write: the address is put back on the old HostSubnet only", async () => {
      await deny({ group: net, resource: "hostsubnets", name: w.node.a1 });
      const move = forNs("x").moveIP(ip, w.node.a2, w.node.a1);
      await expect(move).rejects.toThrow(/injected failure/);
      await expect(move).rejects.toThrow(`${ip} was put back on HostSubnet ${w.node.a2}`);
      expect(await carriers()).toEqual([w.node.a2]);
      expect(await netNamespaceIps(w.ns.x)).toEqual([ip]);
    });

    it("the new HostSubnet's write and the undo: the address is on no HostSubnet, and the error says so", async () => {
      await deny({ group: net, resource: "hostsubnets", name: w.node.a1 });
      const adding = `has(object.egressIPs) && '${ip}' in object.egressIPs && !(has(oldObject.egressIPs) && '${ip}' in oldObject.egressIPs)`;
      await deny({ group: net, resource: "hostsubnets", name: w.node.a2, when: adding });
      const move = forNs("x").moveIP(ip, w.node.a2, w.node.a1);
      await expect(move).rejects.toThrow(/undoing the step before it also failed: .*injected failure/);
      await expect(move).rejects.toThrow(`${ip} is on no HostSubnet`);
      expect(await carriers()).toEqual([]);
    });
  });

  it("tells a node that went NotReady does not serve its domain any more", async () => {
    const x = forNs("x");
    expect(await x.hostServes!(w.node.a2, w.zone("a"))).toBe(true);
    await setNodeReady(w.node.a2, false);
    fresh();
    expect(await x.hostServes!(w.node.a2, w.zone("a"))).toBe(false);
    await setNodeReady(w.node.a2, true);
    fresh();
  });

  it("counts every egress address of the cluster as used (HostSubnets, NetNamespaces, EgressIPs, CloudPrivateIPConfigs)", async () => {
    const { objects } = kube();
    const eip = `eip-${w.ns.z}`;
    await objects.create({
      apiVersion: "k8s.ovn.org/v1",
      kind: "EgressIP",
      metadata: { name: eip },
      spec: { egressIPs: ["10.0.1.77"], namespaceSelector: { matchLabels: { a: "b" } } },
    } as k8s.KubernetesObject);
    await objects.create({
      apiVersion: "cloud.network.openshift.io/v1",
      kind: "CloudPrivateIPConfig",
      metadata: { name: "10.0.1.78" },
      spec: { node: w.node.a1 },
    } as k8s.KubernetesObject);
    try {
      await forNs("z").addSpecifiedIP("10.0.1.79", w.node.a2);
      const used = await forNs("z").usedAddresses!(["10.0.1.0/24"]);
      expect(used).toEqual(expect.arrayContaining(["10.0.1.77", "10.0.1.78", "10.0.1.79", "10.0.1.200"]));
      expect(used.every((ip) => ip.startsWith("10.0.1."))).toBe(true);
    } finally {
      await forNs("z").removeIP("10.0.1.79", w.node.a2);
      await objects.delete({ apiVersion: "k8s.ovn.org/v1", kind: "EgressIP", metadata: { name: eip } });
      await objects.delete({
        apiVersion: "cloud.network.openshift.io/v1",
        kind: "CloudPrivateIPConfig",
        metadata: { name: "10.0.1.78" },
      });
    }
  });

  it("loses no address when 24 placements and another writer add to one HostSubnet at once", async () => {
    // One namespace per writer, so the SDN rule allows them all on one node.
    const keys = Array.from({ length: 24 }, (_, i) => `ns${i}`);
    const extra = await sdnWorld({ n: { zone: "n" } }, keys);
    try {
      const cfg = { kind: "ocp-static" as const, nodeSelector: extra.selector };
      const ips = Array.from({ length: 24 }, (_, i) => `10.0.4.${10 + i}`);
      const foreign = Array.from({ length: 24 }, (_, i) => `10.0.5.${10 + i}`);
      const other = (async () => {
        for (const ip of foreign) await foreignAdd(extra.node.n, ip);
      })();
      await Promise.all(
        ips.map((ip, i) =>
          createProvisioner({ ...cfg, namespace: extra.ns[keys[i]!] }).addSpecifiedIP(ip, extra.node.n),
        ),
      );
      await other;
      expect((await hostSubnetIps(extra.node.n)).sort()).toEqual([...ips, ...foreign].sort());
      for (let i = 0; i < 24; i++) expect(await netNamespaceIps(extra.ns[keys[i]!]!)).toEqual([ips[i]!]);
    } finally {
      await extra.cleanup();
    }
  });

  it.each([
    [
      { context: "nobody@nowhere" },
      /kubeconfig context "nobody@nowhere" not found in .*contexts: admin@test, limited@test/,
    ],
    [
      { nodeSelector: { "egress-test/none": "true" } },
      /nodeSelector \{egress-test\/none=true\} matches no Node/,
    ],
  ])("refuses %j naming the value", async (over, message) => {
    const p = () => createProvisioner({ ...config, ...over, namespace: w.ns.x });
    await expect(Promise.resolve().then(() => p().findHostForIP!("10.0.1.10", w.zone("a")))).rejects.toThrow(
      message,
    );
  });

  it("names the missing permission when the context may not write HostSubnets", async () => {
    const p = createProvisioner({ ...config, context: "limited@test", namespace: w.ns.x });
    await expect(p.addSpecifiedIP("10.0.2.50", w.node.b1)).rejects.toThrow(
      /on https:\/\/127\.0\.0\.1:\d+ \(kubeconfig context "limited@test"\) failed: 403 Forbidden: .*User "limited" cannot list resource ".*grant the permission named above/,
    );
  });
});
