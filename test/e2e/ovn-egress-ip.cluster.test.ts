// EgressIp and CidrAssignment with the ovn provisioner: the real Pulumi engine against the real
// kube-apiserver (EgressIP objects of k8s.ovn.org/v1; the test writes status.items as ovnkube would).
import type * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";
import { kube, setNodeReady, testKubeconfig } from "../support/kube";
import { sdnWorld, type SdnWorld } from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
// Subnets of their own per run: egress addresses anywhere in the cluster count as taken, so a
// leftover of an interrupted run must not shift this run's plan.
const octet = 1 + Math.floor(Math.random() * 120);
const [netA, netB] = [`10.22.${octet * 2}`, `10.22.${octet * 2 + 1}`];
type EgressIpObject = k8s.KubernetesObject & {
  spec: { egressIPs: string[]; namespaceSelector: unknown };
  status?: { items: { node: string; egressIP: string }[] };
};
const ovn = "k8s.ovn.org/v1";
const assignable = "k8s.ovn.org/egress-assignable";
const ipconfig = (subnet: string) => ({
  "cloud.network.openshift.io/egress-ipconfig": JSON.stringify([
    { interface: "eth0", ifaddr: { ipv4: subnet }, capacity: { ipv4: 8 } },
  ]),
});

describe("EgressIp with the ovn provisioner, against kube-apiserver", () => {
  const h = Harness.create("ovn", { env: { KUBECONFIG: testKubeconfig() } });
  const { IpPool, EgressIp, CidrAssignment } = h.pkg<Pkg>("pulumi-egress-ipam");
  let w: SdnWorld<"a1" | "a2" | "b1" | "b2", "x">;
  const foreign = `foreign-${Date.now()}`;
  const objectName = () => `egress-ipam-${w.ns.x}`;
  const read = () =>
    kube().objects.read({
      apiVersion: ovn,
      kind: "EgressIP",
      metadata: { name: objectName() },
    }) as Promise<EgressIpObject>;
  const exists = () =>
    read().then(
      () => true,
      (e: { code?: number }) => (e.code === 404 ? false : Promise.reject(e)),
    );
  const labelled = async () => {
    const out: string[] = [];
    for (const k of ["a1", "a2", "b1", "b2"] as const) {
      const node = await kube().core.readNode({ name: w.node[k] });
      if (assignable in (node.metadata?.labels ?? {})) out.push(w.node[k]);
    }
    return out;
  };
  /** Hosts as preview planned them: EgressIp per zone, CidrAssignment per zone. */
  const planned = { a: "", b: "", cidrA: "", cidrB: "" };
  const other = (zone: "a" | "b", node: string) =>
    node === w.node[`${zone}1`] ? w.node[`${zone}2`] : w.node[`${zone}1`];
  const program = () => async () => {
    const provisioner = { kind: "ovn" as const, nodeSelector: w.selector };
    const pools = {
      [w.zone("a")]: new IpPool("egress-a", {
        ranges: [{ subnet: `${netA}.0/24`, rangeStart: `${netA}.10` }],
      }),
      [w.zone("b")]: new IpPool("egress-b", {
        ranges: [{ subnet: `${netB}.0/24`, rangeStart: `${netB}.10` }],
      }),
    };
    for (const [zone, pool] of Object.entries(pools)) {
      new CidrAssignment(`assignable-${zone}`, { pool, provisioner, failureDomain: zone });
    }
    const x = new EgressIp("team-x", {
      pool: pools,
      namespace: w.ns.x,
      failureDomains: Object.keys(pools),
      provisioner,
    });
    return { ips: x.ips, hosts: x.hosts };
  };
  const outputs = async () => {
    const up = await h.up();
    return { ips: up.outputs.ips!.value as string[], hosts: up.outputs.hosts!.value as string[] };
  };

  beforeAll(async () => {
    w = await sdnWorld(
      {
        a1: { zone: "a", hostSubnet: false, annotations: ipconfig(`${netA}.0/24`) },
        a2: { zone: "a", hostSubnet: false, annotations: ipconfig(`${netA}.0/24`) },
        b1: { zone: "b", hostSubnet: false, annotations: ipconfig(`${netB}.0/24`) },
        b2: { zone: "b", hostSubnet: false, annotations: ipconfig(`${netB}.0/24`) },
      },
      ["x"],
      { netNamespaces: false },
    );
    await kube().objects.create({
      apiVersion: ovn,
      kind: "EgressIP",
      metadata: { name: foreign },
      spec: { egressIPs: [`${netA}.10`], namespaceSelector: { matchLabels: { team: "elsewhere" } } },
    } as k8s.KubernetesObject);
    await h.program(program());
  });
  afterAll(async () => {
    h.dispose();
    await kube()
      .objects.delete({ apiVersion: ovn, kind: "EgressIP", metadata: { name: foreign } })
      .catch(() => undefined);
    await w?.cleanup();
  });

  it("shows addresses and hosts at preview, never the address a foreign EgressIP has", async () => {
    const preview = await h.preview();
    const a = preview.planned(`EgressIpAssignment::team-x-${w.zone("a")}`)!;
    const b = preview.planned(`EgressIpAssignment::team-x-${w.zone("b")}`)!;
    expect(a).toMatchObject({ ip: `${netA}.11` });
    expect(b).toMatchObject({ ip: `${netB}.10` });
    expect([w.node.a1, w.node.a2]).toContain(a.host);
    expect([w.node.b1, w.node.b2]).toContain(b.host);
    const cidrA = preview.planned(`assignable-${w.zone("a")}`)!.hosts as string[];
    const cidrB = preview.planned(`assignable-${w.zone("b")}`)!.hosts as string[];
    expect(cidrA).toHaveLength(1);
    expect([w.node.a1, w.node.a2]).toContain(cidrA[0]);
    Object.assign(planned, { a: a.host, b: b.host, cidrA: cidrA[0], cidrB: cidrB[0] });
    expect(await exists()).toBe(false);
  });

  it("writes one EgressIP with the namespace's addresses and labels the chosen nodes; a second up changes nothing", async () => {
    expect(await outputs()).toEqual({ ips: [`${netA}.11`, `${netB}.10`], hosts: [planned.a, planned.b] });
    const o = await read();
    expect([...o.spec.egressIPs].sort()).toEqual([`${netA}.11`, `${netB}.10`]);
    expect(o.spec.namespaceSelector).toEqual({ matchLabels: { "kubernetes.io/metadata.name": w.ns.x } });
    expect((await labelled()).sort()).toEqual([planned.cidrA, planned.cidrB].sort());
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("records where ovnkube put an address (status.items) at refresh and up, and keeps that status", async () => {
    const items = [
      { node: planned.a, egressIP: `${netA}.11` },
      { node: other("b", planned.b), egressIP: `${netB}.10` }, // not where we expected it
    ];
    await kube().objects.replace({ ...(await read()), status: { items } } as k8s.KubernetesObject);
    const refresh = await h.refresh();
    expect(changesOf(refresh.summary.resourceChanges)).toEqual({ update: 1 });
    const out = await outputs();
    expect(out.hosts).toEqual([planned.a, other("b", planned.b)]);
    expect((await read()).status).toEqual({ items });
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({});
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("finds an address taken out of the spec behind its back; the next up puts it back, status intact", async () => {
    const o = await read();
    await kube().objects.replace({
      ...o,
      spec: { ...o.spec, egressIPs: o.spec.egressIPs.filter((ip) => ip !== `${netB}.10`) },
    } as k8s.KubernetesObject);
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({ update: 1 });
    await outputs();
    const after = await read();
    expect([...after.spec.egressIPs].sort()).toEqual([`${netA}.11`, `${netB}.10`]);
    expect(after.status?.items).toHaveLength(2);
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("moves the planned host off a node that went NotReady", async () => {
    await setNodeReady(planned.a, false);
    try {
      const preview = await h.preview();
      const name = `EgressIpAssignment::team-x-${w.zone("a")}`;
      expect(preview.op(name)).toBe("update");
      expect(preview.planned(name)).toMatchObject({ host: other("a", planned.a) });
      expect((await outputs()).hosts[0]).toBe(other("a", planned.a));
      expect((await read()).spec.egressIPs).toContain(`${netA}.11`);
    } finally {
      await setNodeReady(planned.a, true);
    }
  });

  it("leaves no trace on destroy: no EgressIP object, no label", async () => {
    await h.destroy();
    expect(await exists()).toBe(false);
    expect(await labelled()).toEqual([]);
    const f = (await kube().objects.read({
      apiVersion: ovn,
      kind: "EgressIP",
      metadata: { name: foreign },
    })) as EgressIpObject;
    expect(f.spec.egressIPs).toEqual([`${netA}.10`]);
  });

  it("refuses at preview an address outside every node's egress subnet, naming it", async () => {
    const bad = Harness.create("ovn-bad", { env: { KUBECONFIG: testKubeconfig() } });
    try {
      await bad.program(async () => {
        const pool = new IpPool("elsewhere", {
          ranges: [{ subnet: "10.99.0.0/24", rangeStart: "10.99.0.10" }],
        });
        new EgressIp("bad", {
          pool,
          namespace: w.ns.x,
          failureDomains: [w.zone("a")],
          provisioner: { kind: "ovn", nodeSelector: w.selector },
        });
      });
      await expect(bad.preview()).rejects.toThrow(
        new RegExp(`10\\.99\\.0\\.10 is outside its egress subnet ${netA.replaceAll(".", "\\.")}\\.0/24`),
      );
    } finally {
      bad.dispose();
    }
  });
});
