// EgressIp with the antrea provisioner: the real Pulumi engine against the real kube-apiserver
// (Egress objects of crd.antrea.io/v1beta1; the test writes status.egressNode as Antrea's agent
// would). One Egress per namespace and address, the planned address and Node at preview; refresh
// records the Node Antrea chose; a foreign Egress is never touched and its address never planned.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { antreaObjectName } from "../../provider/provisioners/kubernetes/antrea/antrea";
import { changesOf, Harness } from "../support/harness";
import { kube, testKubeconfig } from "../support/kube";
import { sdnWorld, type SdnWorld } from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
const net = `10.33.${1 + Math.floor(Math.random() * 250)}`;
const group = "crd.antrea.io";
const version = "v1beta1";
type Egress = k8s.KubernetesObject & {
  spec: { egressIP: string; externalIPPool?: string; appliedTo: unknown };
  status?: { egressNode?: string };
};

const custom = () => kube().config.makeApiClient(k8s.CustomObjectsApi);
const readEgress = (name: string) =>
  custom().getClusterCustomObject({ group, version, plural: "egresses", name }) as Promise<Egress>;
const egressExists = (name: string) =>
  readEgress(name).then(
    () => true,
    (e: { code?: number }) => (e.code === 404 ? false : Promise.reject(e)),
  );
/** Writes status.egressNode as Antrea's agent does, through the status subresource. */
const setEgressNode = (name: string, node: string) =>
  custom().patchClusterCustomObjectStatus(
    { group, version, plural: "egresses", name, body: { status: { egressNode: node } } },
    k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
  );

describe("EgressIp with the antrea provisioner, against kube-apiserver", () => {
  const h = Harness.create("antrea", { env: { KUBECONFIG: testKubeconfig() } });
  let w: SdnWorld<"a1" | "a2" | "b1", "x">;
  const foreign = `foreign-${Date.now()}`;
  const foreignIp = `${net}.2`;

  beforeAll(async () => {
    w = await sdnWorld(
      {
        a1: { zone: "a", hostSubnet: false },
        a2: { zone: "a", hostSubnet: false },
        b1: { zone: "b", hostSubnet: false },
      },
      ["x"],
      { netNamespaces: false },
    );
    // Somebody else's Egress with an address of the pool's subnet.
    await custom().createClusterCustomObject({
      group,
      version,
      plural: "egresses",
      body: {
        apiVersion: `${group}/${version}`,
        kind: "Egress",
        metadata: { name: foreign },
        spec: { appliedTo: { podSelector: { matchLabels: { app: "other" } } }, egressIP: foreignIp },
      },
    });
  });
  afterAll(async () => {
    await h.destroy().catch(() => undefined);
    h.dispose();
    await custom()
      .deleteClusterCustomObject({ group, version, plural: "egresses", name: foreign })
      .catch(() => undefined);
    await w?.cleanup();
  });

  const program = () => async () => {
    const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
    const pool = new IpPool("egress", { ranges: [{ subnet: `${net}.0/28` }] });
    const e = new EgressIp("team", {
      pool,
      namespace: w.ns.x,
      failureDomains: [w.zone("a"), w.zone("b")],
      provisioner: { kind: "antrea", nodeSelector: w.selector, externalIPPool: "egress-pool" },
    });
    return { ips: e.ips, hosts: e.hosts };
  };

  it("writes one Egress per address as preview showed it; refresh records Antrea's Node; destroy removes them", async () => {
    await h.program(program());
    const preview = await h.preview();
    const planned = [w.zone("a"), w.zone("b")].map((d) => ({
      ip: preview.planned(`IpAllocation::team-${d}`)?.ip as string,
      host: preview.planned(`EgressIpAssignment::team-${d}`)?.host as string,
    }));
    expect(planned.map((p) => p.ip)).not.toContain(foreignIp);
    expect([w.node.a1, w.node.a2]).toContain(planned[0]!.host);
    expect(planned[1]!.host).toBe(w.node.b1);

    const up = await h.up();
    expect(up.outputs.ips!.value).toEqual(planned.map((p) => p.ip));
    expect(up.outputs.hosts!.value).toEqual(planned.map((p) => p.host));
    for (const { ip } of planned) {
      const egress = await readEgress(antreaObjectName(w.ns.x, ip));
      expect(egress.metadata?.labels?.["app.kubernetes.io/managed-by"]).toBe("pulumi-egress-ipam");
      expect(egress.spec).toEqual({
        appliedTo: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": w.ns.x } } },
        egressIP: ip,
        externalIPPool: "egress-pool",
      });
    }
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});

    // Antrea's agents: the zone-a address on the other Node of the zone, the zone-b one where planned.
    const elsewhere = planned[0]!.host === w.node.a1 ? w.node.a2 : w.node.a1;
    await setEgressNode(antreaObjectName(w.ns.x, planned[0]!.ip), elsewhere);
    await setEgressNode(antreaObjectName(w.ns.x, planned[1]!.ip), w.node.b1);
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({ update: 1 });
    // Recorded by the next up, not moved back: Antrea's choice stands, and the spec stays as it was.
    expect((await h.up()).outputs.hosts!.value).toEqual([elsewhere, w.node.b1]);
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({});
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
    expect((await readEgress(antreaObjectName(w.ns.x, planned[0]!.ip))).status?.egressNode).toBe(elsewhere);

    // An Egress edited behind our back is put back by the next up.
    await custom().patchClusterCustomObject(
      {
        group,
        version,
        plural: "egresses",
        name: antreaObjectName(w.ns.x, planned[1]!.ip),
        body: { spec: { externalIPPool: "another-pool" } },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({ update: 1 });
    await h.up();
    expect((await readEgress(antreaObjectName(w.ns.x, planned[1]!.ip))).spec.externalIPPool).toBe(
      "egress-pool",
    );
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});

    await h.destroy();
    for (const { ip } of planned) expect(await egressExists(antreaObjectName(w.ns.x, ip))).toBe(false);
    expect((await readEgress(foreign)).spec.egressIP).toBe(foreignIp);
  });
});
