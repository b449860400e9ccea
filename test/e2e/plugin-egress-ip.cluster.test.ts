// The EgressIp component from a Python program (the plugin constructs it of its own resources), with
// the ovn provisioner against the test cluster: two EgressIps over two zones, the second after the
// first; preview shows every address and host and up places exactly those in the namespaces'
// EgressIP objects; a second up changes nothing; two EgressIps new in one update with nothing
// ordering them are refused at preview; refresh records where ovnkube moved an address and up keeps
// it there; refresh finds an EgressIP object deleted by hand and up puts it back; destroy leaves
// nothing.
import type * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changesOf, type Harness } from "../support/harness";
import { pluginProject, pythonSdk, writeProjectFile } from "../support/plugin-project";
import { kube, testKubeconfig } from "../support/kube";
import { sdnWorld, type SdnWorld } from "../support/sdn-world";

const octet = 1 + Math.floor(Math.random() * 120);
const [netA, netB] = [`10.24.${octet * 2}`, `10.24.${octet * 2 + 1}`];
const ovn = "k8s.ovn.org/v1";
const ipconfig = (subnet: string) => ({
  "cloud.network.openshift.io/egress-ipconfig": JSON.stringify([
    { interface: "eth0", ifaddr: { ipv4: subnet }, capacity: { ipv4: 8 } },
  ]),
});

describe("the EgressIp component from a Python program, on ovn", () => {
  let h: Harness;
  let w: SdnWorld<"a1" | "a2" | "b1" | "b2", "x" | "y">;
  const egressIps = (namespace: string) =>
    kube()
      .objects.read({ apiVersion: ovn, kind: "EgressIP", metadata: { name: `egress-ipam-${namespace}` } })
      .then(
        (o) => [...(o as k8s.KubernetesObject & { spec: { egressIPs: string[] } }).spec.egressIPs].sort(),
        (e: { code?: number }) => (e.code === 404 ? undefined : Promise.reject(e)),
      );
  const program = (ordered: boolean) => `import pulumi
import pulumi_egress_ipam as ipam

provisioner = {"kind": "ovn", "nodeSelector": ${JSON.stringify(w.selector)}}
pools = {
    "${w.zone("a")}": ipam.IpPool("egress-a", ranges=[ipam.IpPoolRangeArgs(subnet="${netA}.0/24", range_start="${netA}.10")]),
    "${w.zone("b")}": ipam.IpPool("egress-b", ranges=[ipam.IpPoolRangeArgs(subnet="${netB}.0/24", range_start="${netB}.10")]),
}
x = ipam.EgressIp("team-x", pool=pools, namespace="${w.ns.x}", failure_domains=list(pools), provisioner=provisioner)
y = ipam.EgressIp("team-y", pool=pools, namespace="${w.ns.y}", failure_domains=list(pools), provisioner=provisioner${
    ordered ? ", after=x" : ""
  })
pulumi.export("x", x.ips)
pulumi.export("y", y.ips)
pulumi.export("hosts", x.hosts)
`;

  beforeAll(async () => {
    w = await sdnWorld(
      {
        a1: { zone: "a", hostSubnet: false, annotations: ipconfig(`${netA}.0/24`) },
        a2: { zone: "a", hostSubnet: false, annotations: ipconfig(`${netA}.0/24`) },
        b1: { zone: "b", hostSubnet: false, annotations: ipconfig(`${netB}.0/24`) },
        b2: { zone: "b", hostSubnet: false, annotations: ipconfig(`${netB}.0/24`) },
      },
      ["x", "y"],
      { netNamespaces: false },
    );
    const consumer = process.env.EGRESS_IPAM_CONSUMER!;
    h = pluginProject(
      consumer,
      "plugin-egress-ip",
      { "Pulumi.yaml": "name: plugin-egress-ip\nruntime: python\n", "__main__.py": "" },
      { env: { KUBECONFIG: testKubeconfig(), PYTHONPATH: pythonSdk(consumer) } },
    );
    await h.project();
  });
  afterAll(async () => {
    h?.dispose();
    await w?.cleanup();
  });

  it("refuses at preview two new EgressIps on one pool that nothing orders", async () => {
    writeProjectFile(h, "__main__.py", program(false));
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toMatch(
      /\[INVALID_CONFIG\] team-[xy]-\S+ and team-[xy]-\S+ both take a new address from pool egress-/,
    );
    expect(err).toContain("set after on the EgressIp");
  });

  it("preview shows every address and host, up places exactly those, a second up changes nothing", async () => {
    writeProjectFile(h, "__main__.py", program(true));
    const preview = await h.preview();
    const planned = (n: string) => preview.planned(`EgressIpAssignment::${n}`);
    const [xa, xb, ya, yb] = [
      planned(`team-x-${w.zone("a")}`),
      planned(`team-x-${w.zone("b")}`),
      planned(`team-y-${w.zone("a")}`),
      planned(`team-y-${w.zone("b")}`),
    ];
    expect([xa?.ip, xb?.ip, ya?.ip, yb?.ip]).toEqual([
      `${netA}.10`,
      `${netB}.10`,
      `${netA}.11`,
      `${netB}.11`,
    ]);
    expect([w.node.a1, w.node.a2]).toContain(xa?.host);
    expect([w.node.b1, w.node.b2]).toContain(xb?.host);
    const up = await h.up();
    expect(up.outputs.x?.value).toEqual([`${netA}.10`, `${netB}.10`]);
    expect(up.outputs.y?.value).toEqual([`${netA}.11`, `${netB}.11`]);
    expect(up.outputs.hosts?.value).toEqual([xa?.host, xb?.host]);
    expect(await egressIps(w.ns.x)).toEqual([`${netA}.10`, `${netB}.10`]);
    expect(await egressIps(w.ns.y)).toEqual([`${netA}.11`, `${netB}.11`]);
    expect(changesOf((await h.up()).summary.resourceChanges as Record<string, number>)).toEqual({});
  });

  it("records where ovnkube moved an address at refresh, and up keeps it there; the refresh after finds nothing", async () => {
    const name = `egress-ipam-${w.ns.x}`;
    const before = (await h.up()).outputs.hosts?.value as string[];
    const moved = before[1] === w.node.b1 ? w.node.b2 : w.node.b1;
    const o = await kube().objects.read({ apiVersion: ovn, kind: "EgressIP", metadata: { name } });
    const items = [
      { node: before[0], egressIP: `${netA}.10` },
      { node: moved, egressIP: `${netB}.10` }, // ovnkube failed it over
    ];
    await kube().objects.replace({ ...o, status: { items } } as k8s.KubernetesObject);
    expect(changesOf((await h.refresh()).summary.resourceChanges as Record<string, number>)).toEqual({
      update: 1,
    });
    const up = await h.up();
    expect(up.outputs.hosts?.value).toEqual([before[0], moved]);
    expect(changesOf((await h.refresh()).summary.resourceChanges as Record<string, number>)).toEqual({});
    expect(changesOf((await h.up()).summary.resourceChanges as Record<string, number>)).toEqual({});
  });

  it("refresh finds an EgressIP object deleted by hand and up puts it back; destroy leaves nothing", async () => {
    await kube().objects.delete({
      apiVersion: ovn,
      kind: "EgressIP",
      metadata: { name: `egress-ipam-${w.ns.y}` },
    });
    const refresh = await h.refresh();
    expect(changesOf(refresh.summary.resourceChanges as Record<string, number>)).toEqual({ update: 2 });
    await h.up();
    expect(await egressIps(w.ns.y)).toEqual([`${netA}.11`, `${netB}.11`]);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
    await h.destroy();
    expect(await h.resources()).toEqual([]);
    expect([await egressIps(w.ns.x), await egressIps(w.ns.y)]).toEqual([undefined, undefined]);
  });
});
