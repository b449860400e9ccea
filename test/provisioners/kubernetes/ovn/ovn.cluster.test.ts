// The ovn provisioner against the real kube-apiserver: EgressIP objects (spec only, status.items
// as ovnkube writes them survives), egress-ipconfig subnet and capacity, and node labels.
import type * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProvisioner } from "../../../../provider/provisioners/factory/create-provisioner";
import type { OvnProvisionerConfig } from "../../../../provider/provisioners/config/kube-provisioner-config";
import { kube } from "../../../support/kube";
import { sdnWorld, type SdnWorld } from "../../../support/sdn-world";

const ovn = "k8s.ovn.org/v1";
const ipconfig = (subnet: string, capacity: number) => ({
  "cloud.network.openshift.io/egress-ipconfig": JSON.stringify([
    { interface: "eni-1", ifaddr: { ipv4: subnet }, capacity: { ipv4: capacity } },
  ]),
});
type EgressIpObject = k8s.KubernetesObject & {
  spec: { egressIPs: string[]; namespaceSelector: unknown };
  status?: { items: { node: string; egressIP: string }[] };
};
const read = (name: string) =>
  kube().objects.read({ apiVersion: ovn, kind: "EgressIP", metadata: { name } }) as Promise<EgressIpObject>;
/** Writes status.items as ovnkube does: a whole-object update (there is no status subresource). */
const writeStatus = async (name: string, items: { node: string; egressIP: string }[]) => {
  const o = await read(name);
  await kube().objects.replace({ ...o, status: { items } } as k8s.KubernetesObject);
};

describe("ovn provisioner (real kube-apiserver)", () => {
  let w: SdnWorld<"a1" | "a2" | "a3" | "b1", "x" | "y" | "z">;
  let config: OvnProvisionerConfig;
  const forNs = (key: "x" | "y" | "z") => createProvisioner({ ...config, namespace: w.ns[key] });
  const objectOf = (key: "x" | "y" | "z") => `egress-ipam-${w.ns[key]}`;

  beforeAll(async () => {
    w = await sdnWorld(
      {
        a1: { zone: "a", hostSubnet: false, annotations: ipconfig("10.30.1.0/24", 2) },
        a2: { zone: "a", hostSubnet: false, annotations: ipconfig("10.30.1.0/24", 2) },
        a3: { zone: "a", hostSubnet: false, annotations: ipconfig("10.30.9.0/24", 1) },
        b1: { zone: "b", hostSubnet: false },
      },
      ["x", "y", "z"],
      { netNamespaces: false },
    );
    config = { kind: "ovn", nodeSelector: w.selector };
  });
  afterAll(() => w?.cleanup());

  it("plans only nodes whose egress subnet holds the address, within their capacity", async () => {
    expect(await forNs("x").findHostForIP!("10.30.9.5", w.zone("a"))).toBe(w.node.a3);
    const outside = forNs("x").findHostForIP!("10.99.0.1", w.zone("a"));
    await expect(outside).rejects.toThrow(/10\.99\.0\.1 is outside its egress subnet 10\.30\.1\.0\/24/);
    // a3 took 10.30.9.5 above, its capacity.
    await expect(outside).rejects.toThrow(new RegExp(`${w.node.a3} \\(full: 1 of 1 egress IPs\\)`));
    // a1 and a2 take two each; one namespace never twice on a node.
    const y = forNs("y");
    const z = forNs("z");
    const ys = [
      await y.findHostForIP!("10.30.1.10", w.zone("a")),
      await y.findHostForIP!("10.30.1.11", w.zone("a")),
    ];
    const zs = [
      await z.findHostForIP!("10.30.1.12", w.zone("a")),
      await z.findHostForIP!("10.30.1.13", w.zone("a")),
    ];
    expect(ys.sort()).toEqual([w.node.a1, w.node.a2]);
    expect(zs.sort()).toEqual([w.node.a1, w.node.a2]);
    const full = forNs("x").findHostForIP!("10.30.1.14", w.zone("a"));
    await expect(full).rejects.toThrow(new RegExp(`${w.node.a1} \\(full: 2 of 2 egress IPs\\)`));
    await expect(full).rejects.toThrow(new RegExp(`${w.node.a2} \\(full: 2 of 2 egress IPs\\)`));
  });

  it("writes the spec of one EgressIP per namespace and never overwrites status.items", async () => {
    const x = forNs("x");
    await x.addSpecifiedIP("10.30.2.10", w.node.b1);
    const created = await read(objectOf("x"));
    expect(created.spec).toEqual({
      egressIPs: ["10.30.2.10"],
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": w.ns.x } },
    });
    expect(created.metadata?.labels).toEqual({ "app.kubernetes.io/managed-by": "pulumi-egress-ipam" });

    await writeStatus(objectOf("x"), [{ node: w.node.b1, egressIP: "10.30.2.10" }]);
    await x.checkIP("10.30.2.10", w.node.b1);
    await expect(x.checkIP("10.30.2.10", w.node.a1)).rejects.toThrow(
      `OVN-Kubernetes assigned egress IP 10.30.2.10 to node ${w.node.b1}, not ${w.node.a1}`,
    );
    // Where ovnkube put it is where the next plan puts it.
    expect(await x.findHostForIP!("10.30.2.10", w.zone("b"))).toBe(w.node.b1);

    await x.addSpecifiedIP("10.30.2.11", w.node.b1);
    await expect(x.checkIP("10.30.2.11", w.node.b1)).rejects.toThrow(
      `OVN-Kubernetes has not assigned egress IP 10.30.2.11 to any node (status.items: 10.30.2.10 on ${w.node.b1})`,
    );
    await x.removeIP("10.30.2.11", w.node.b1);
    const after = await read(objectOf("x"));
    expect(after.spec.egressIPs).toEqual(["10.30.2.10"]);
    expect(after.status).toEqual({ items: [{ node: w.node.b1, egressIP: "10.30.2.10" }] });

    await x.removeIP("10.30.2.10", w.node.b1);
    await expect(read(objectOf("x"))).rejects.toMatchObject({ code: 404 });
    await expect(x.checkIP("10.30.2.10", w.node.b1)).rejects.toThrow(/no such object/);
  });

  it("keeps every address and ovnkube's status when 16 writers edit one EgressIP at once", async () => {
    const ips = Array.from({ length: 16 }, (_, i) => `10.30.3.${10 + i}`);
    await forNs("y").addSpecifiedIP(ips[0]!, w.node.b1);
    await writeStatus(objectOf("y"), [{ node: w.node.b1, egressIP: ips[0]! }]);
    await Promise.all(
      ips
        .slice(1)
        .map((ip) => createProvisioner({ ...config, namespace: w.ns.y }).addSpecifiedIP(ip, w.node.b1)),
    );
    const o = await read(objectOf("y"));
    expect([...o.spec.egressIPs].sort()).toEqual([...ips].sort());
    expect(o.status).toEqual({ items: [{ node: w.node.b1, egressIP: ips[0] }] });
    await Promise.all(ips.map((ip) => forNs("y").removeIP(ip, w.node.b1)));
    await expect(read(objectOf("y"))).rejects.toMatchObject({ code: 404 });
  });

  it("refuses an address another EgressIP has, and an object of its name it does not manage", async () => {
    const { objects } = kube();
    const foreign = `foreign-${w.ns.z}`;
    await objects.create({
      apiVersion: ovn,
      kind: "EgressIP",
      metadata: { name: foreign },
      spec: { egressIPs: ["10.30.4.10"], namespaceSelector: { matchLabels: { team: "other" } } },
    } as k8s.KubernetesObject);
    await objects.create({
      apiVersion: ovn,
      kind: "EgressIP",
      metadata: { name: objectOf("z") },
      spec: { egressIPs: ["10.30.4.20"], namespaceSelector: { matchLabels: { team: "z" } } },
    } as k8s.KubernetesObject);
    try {
      await expect(forNs("x").addSpecifiedIP("10.30.4.10", w.node.b1)).rejects.toThrow(
        `cannot give 10.30.4.10 to namespace ${w.ns.x}: EgressIP ${foreign} already has it in spec.egressIPs`,
      );
      await expect(forNs("z").addSpecifiedIP("10.30.4.21", w.node.b1)).rejects.toThrow(
        `EgressIP ${objectOf("z")} exists and is not managed by pulumi-egress-ipam`,
      );
      expect(await forNs("x").usedAddresses!(["10.30.4.0/24"])).toEqual(["10.30.4.10", "10.30.4.20"]);
    } finally {
      for (const name of [foreign, objectOf("z")]) {
        await objects.delete({ apiVersion: ovn, kind: "EgressIP", metadata: { name } });
      }
    }
  });

  it("labels a node egress-assignable and takes the label off again", async () => {
    const p = createProvisioner({ ...config });
    const labels = async () => (await kube().core.readNode({ name: w.node.b1 })).metadata?.labels ?? {};
    await p.assignCIDR(w.node.b1);
    expect(await labels()).toMatchObject({ "k8s.ovn.org/egress-assignable": "" });
    await p.unassignCIDR!(w.node.b1);
    expect(Object.keys(await labels())).not.toContain("k8s.ovn.org/egress-assignable");
    await p.unassignCIDR!(w.node.b1); // already off: fine
  });
});
