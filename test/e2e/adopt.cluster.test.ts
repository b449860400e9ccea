// `adopt: true` on an EgressIp takes over what the cluster already gives a namespace, with the real
// engine and the real kube-apiserver: its NetNamespace's egressIPs (on a HostSubnet), an EgressIP
// object made by hand that selects it, the egressip-ipam-operator's annotation. Preview shows those
// addresses and hosts; up moves nothing (the SDN and OVN objects compared before and after, only
// our owner record added); a second preview is empty. Refused at preview, nothing changed: an
// address outside the pool, one another resource of the stack holds, a provisioner without a cluster.
import { AssignPrivateIpAddressesCommand, type EC2Client } from "@aws-sdk/client-ec2";
import type * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";
import { kube, testKubeconfig } from "../support/kube";
import {
  createWorld,
  ec2Client,
  interfacesIn,
  motoCredentials,
  secondaryIps,
  startMoto,
  type MotoServer,
  type World,
} from "../support/moto";
import {
  hostSubnetIps,
  netNamespaceIps,
  sdnWorld,
  setHostSubnetIps,
  type SdnWorld,
} from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
const net = `10.29.${1 + Math.floor(Math.random() * 250)}`;
const ovnApi = "k8s.ovn.org/v1";
const sdnApi = "network.openshift.io/v1";
const operatorIps = "egressip-ipam-operator.redhat-cop.io/egressips";

/** Writes an object's field as another writer would (read, replace). */
async function setField(apiVersion: string, kind: string, name: string, field: string, value: unknown) {
  const { objects } = kube();
  const o = (await objects.read({ apiVersion, kind, metadata: { name } })) as Record<string, unknown>;
  await objects.replace({ ...o, [field]: value } as k8s.KubernetesObject);
}

/** An EgressIP object as a person (or GitOps) makes it, with the status ovnkube would write. */
async function handMadeEgressIp(name: string, namespace: string, ip: string, node: string) {
  const { objects } = kube();
  await objects.create({
    apiVersion: ovnApi,
    kind: "EgressIP",
    metadata: { name },
    spec: {
      egressIPs: [ip],
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } },
    },
  } as k8s.KubernetesObject);
  const o = (await objects.read({ apiVersion: ovnApi, kind: "EgressIP", metadata: { name } })) as Record<
    string,
    unknown
  >;
  await objects.replace({ ...o, status: { items: [{ node, egressIP: ip }] } } as k8s.KubernetesObject);
}

const readEgressIp = async (name: string) =>
  (await kube().objects.read({
    apiVersion: ovnApi,
    kind: "EgressIP",
    metadata: { name },
  })) as k8s.KubernetesObject & {
    spec: { egressIPs: string[] };
    status?: unknown;
  };

const egressIpExists = (name: string) =>
  readEgressIp(name).then(
    () => true,
    (e: { code?: number }) => (e.code === 404 ? false : Promise.reject(e)),
  );

describe("adopt: true takes over a namespace's egress IPs where they are", () => {
  let w: SdnWorld<"n1" | "n2" | "n3", "x" | "y" | "z" | "q">;
  const harnesses: Harness[] = [];
  const stack = (project: string) => {
    const h = Harness.create(project, { env: { KUBECONFIG: testKubeconfig() } });
    harnesses.push(h);
    return h;
  };
  type Kind = "ocp-static" | "ovn" | "none";
  const program =
    (
      h: Harness,
      kind: Kind,
      namespace: string,
      subnet: string,
      extra: (pkg: Pkg, pool: unknown) => void = () => {},
    ) =>
    async () => {
      const pkg = h.pkg<Pkg>("pulumi-egress-ipam");
      const provisioner =
        kind === "none"
          ? { kind, hosts: { [w.zone("a")]: [w.node.n1] } }
          : { kind, nodeSelector: w.selector };
      const pool = new pkg.IpPool("egress", { ranges: [{ subnet }] });
      extra(pkg, pool);
      const e = new pkg.EgressIp("team", {
        pool,
        namespace,
        failureDomains: [w.zone("a"), w.zone("b")],
        provisioner,
        adopt: true,
      });
      return { ips: e.ips, hosts: e.hosts };
    };
  /** Preview plans exactly `ips` on `hosts` (per domain, in order), and changes nothing in the cluster. */
  const previewPlans = async (h: Harness, ips: string[], hosts: string[], sources: string[]) => {
    const preview = await h.preview();
    const planned = [w.zone("a"), w.zone("b")].map((d) => ({
      ip: preview.planned(`IpAllocation::team-${d}`)?.ip,
      from: preview.planned(`IpAllocation::team-${d}`)?.adoptedFrom,
      host: preview.planned(`EgressIpAssignment::team-${d}`)?.host,
    }));
    expect(planned).toEqual(ips.map((ip, i) => ({ ip, from: sources[i], host: hosts[i] })));
  };

  beforeAll(async () => {
    w = await sdnWorld({ n1: { zone: "a" }, n2: { zone: "b" }, n3: { zone: "a" } }, ["x", "y", "z", "q"]);
  });
  afterAll(async () => {
    for (const h of harnesses) await h.destroy().catch(() => undefined);
    for (const h of harnesses) h.dispose();
    await kube()
      .objects.delete({ apiVersion: ovnApi, kind: "EgressIP", metadata: { name: "hand-made-y" } })
      .catch(() => undefined);
    await w?.cleanup();
  });

  it("ocp-static: the NetNamespace's addresses on their HostSubnets, nothing moved", async () => {
    const subnet = `${net}.0/28`;
    const [ipA, ipB] = [`${net}.9`, `${net}.4`];
    // As an administrator (or the operator) left it: ipA on n1 (zone a), ipB on n2 (zone b).
    await setField(sdnApi, "NetNamespace", w.ns.x, "egressIPs", [ipA, ipB]);
    await setHostSubnetIps(w.node.n1, [ipA]);
    await setHostSubnetIps(w.node.n2, [ipB]);
    const h = stack("adopt-static");
    await h.program(program(h, "ocp-static", w.ns.x, subnet));
    const from = `NetNamespace ${w.ns.x}`;
    await previewPlans(h, [ipA, ipB], [w.node.n1, w.node.n2], [from, from]);
    const up = await h.up();
    expect(up.outputs.ips!.value).toEqual([ipA, ipB]);
    expect(up.outputs.hosts!.value).toEqual([w.node.n1, w.node.n2]);
    expect(await netNamespaceIps(w.ns.x)).toEqual([ipA, ipB]);
    expect(await hostSubnetIps(w.node.n1)).toEqual([ipA]);
    expect(await hostSubnetIps(w.node.n2)).toEqual([ipB]);
    expect(await hostSubnetIps(w.node.n3)).toEqual([]);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
    // Owned now: destroy takes them off.
    await h.destroy();
    expect(await netNamespaceIps(w.ns.x)).toEqual([]);
    expect(await hostSubnetIps(w.node.n1)).toEqual([]);
  });

  it("ovn: an EgressIP object made by hand becomes ours, spec and status untouched", async () => {
    const subnet = `${net}.16/28`;
    const ip = `${net}.20`;
    await handMadeEgressIp("hand-made-y", w.ns.y, ip, w.node.n3);
    const before = await readEgressIp("hand-made-y");
    const h = stack("adopt-ovn");
    // Zone b has no address: a new one is planned there (shown at preview).
    await h.program(program(h, "ovn", w.ns.y, subnet));
    const preview = await h.preview();
    expect(preview.planned(`IpAllocation::team-${w.zone("a")}`)?.ip).toBe(ip);
    expect(preview.planned(`EgressIpAssignment::team-${w.zone("a")}`)?.host).toBe(w.node.n3);
    const fresh = preview.planned(`IpAllocation::team-${w.zone("b")}`)?.ip as string;
    expect(fresh).not.toBe(ip);
    const up = await h.up();
    expect(up.outputs.ips!.value).toEqual([ip, fresh]);
    const after = await readEgressIp("hand-made-y");
    expect(after.metadata?.labels?.["app.kubernetes.io/managed-by"]).toBe("pulumi-egress-ipam");
    expect(after.metadata?.annotations?.["egress-ipam/namespace"]).toBe(w.ns.y);
    // The new address joins the adopted object; the adopted one stays where ovnkube put it.
    expect(after.spec.egressIPs).toEqual([ip, fresh]);
    expect(after.status).toEqual(before.status);
    expect(await egressIpExists(`egress-ipam-${w.ns.y}`)).toBe(false);
    // ovnkube places the new address on the only Node of zone b, as planned.
    const items = [
      { node: w.node.n3, egressIP: ip },
      { node: w.node.n2, egressIP: fresh },
    ];
    await kube().objects.replace({ ...after, status: { items } } as k8s.KubernetesObject);
    await h.refresh();
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });

  it("the egressip-ipam-operator's annotation: its addresses, on the node the HostSubnet shows", async () => {
    const subnet = `${net}.32/28`;
    const [ipA, ipB] = [`${net}.35`, `${net}.40`];
    const { core } = kube();
    const namespace = await core.readNamespace({ name: w.ns.z });
    namespace.metadata!.annotations = { ...namespace.metadata!.annotations, [operatorIps]: `${ipA},${ipB}` };
    await core.replaceNamespace({ name: w.ns.z, body: namespace });
    await setHostSubnetIps(w.node.n3, [ipA]);
    await setHostSubnetIps(w.node.n2, [ipB]);
    const h = stack("adopt-annotation");
    await h.program(program(h, "ocp-static", w.ns.z, subnet));
    const from = `annotation ${operatorIps} of Namespace ${w.ns.z}`;
    await previewPlans(h, [ipA, ipB], [w.node.n3, w.node.n2], [from, from]);
    await h.up();
    // The NetNamespace had none: both were added (in parallel, so in either order).
    expect((await netNamespaceIps(w.ns.z)).sort()).toEqual([ipA, ipB].sort());
    expect(await hostSubnetIps(w.node.n3)).toEqual([ipA]);
    expect(await hostSubnetIps(w.node.n2)).toEqual([ipB]);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
    await h.destroy();
  });

  it("refuses at preview, naming both, an address outside the pool or held by another resource", async () => {
    const ip = `${net}.50`;
    await setField(sdnApi, "NetNamespace", w.ns.q, "egressIPs", [ip]);
    await setHostSubnetIps(w.node.n1, [ip]);
    const snapshot = async () => [await netNamespaceIps(w.ns.q), await hostSubnetIps(w.node.n1)];
    const before = await snapshot();
    const h = stack("adopt-refused");
    await h.program(program(h, "ocp-static", w.ns.q, `${net}.64/28`));
    await expect(h.preview()).rejects.toThrow(
      new RegExp(
        `${ip} \\(NetNamespace ${w.ns.q}, on node ${w.node.n1} in domain ${w.zone("a")}\\) is outside pool egress`,
      ),
    );
    // The address is the pool's, but another allocation of the stack asks for it first.
    await h.program(
      program(h, "ocp-static", w.ns.q, `${net}.48/28`, (pkg, pool) => {
        new pkg.IpAllocation("vip", { pool: pool as never, ip });
      }),
    );
    await expect(h.preview()).rejects.toThrow(
      /has .*NetNamespace.*, and requested address .* is held by .*vip/,
    );
    await h.program(program(h, "none", w.ns.q, `${net}.48/28`));
    await expect(h.preview()).rejects.toThrow(/none provisioner has no cluster to read: give the addresses/);
    expect(await snapshot()).toEqual(before);
  });
});

// OpenShift SDN on AWS, as the egressip-ipam-operator leaves it: the address is on the NetNamespace,
// on the node's HostSubnet, and a secondary private IP of that node's instance (moto's EC2).
describe("adopt: true with ocp-static and cloud: aws (moto + kube-apiserver)", () => {
  const region = "us-east-1";
  const zone = "us-east-1a";
  let moto: MotoServer;
  let ec2: EC2Client;
  let aws: World;
  let w: SdnWorld<"n1" | "n2", "x">;
  let h: Harness | undefined;
  const onInstances = () => secondaryIps(ec2, [aws.subnetIds[zone]!]);

  beforeAll(async () => {
    moto = await startMoto();
    ec2 = ec2Client(moto.endpoint, region);
    aws = await createWorld(ec2, {
      region,
      subnets: { [zone]: "10.0.1.0/24" },
      instances: { [zone]: [{}, {}] },
    });
    const [i1, i2] = aws.instanceIds[zone]!;
    w = await sdnWorld(
      {
        n1: { zone: "a", providerID: `aws:///${zone}/${i1}` },
        n2: { zone: "a", providerID: `aws:///${zone}/${i2}` },
      },
      ["x"],
    );
  }, 120_000);
  afterAll(async () => {
    await h?.destroy().catch(() => undefined);
    h?.dispose();
    await w?.cleanup();
    await moto?.stop();
  });

  it("the instance's secondary IP, its HostSubnet and the NetNamespace stay as they are; destroy takes all three off", async () => {
    const ip = "10.0.1.20";
    const [i1] = aws.instanceIds[zone]!;
    const eni = (await interfacesIn(ec2, [aws.subnetIds[zone]!])).find(
      (n) => n.Attachment?.InstanceId === i1,
    )!;
    await ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: eni.NetworkInterfaceId,
        PrivateIpAddresses: [ip],
      }),
    );
    await setField(sdnApi, "NetNamespace", w.ns.x, "egressIPs", [ip]);
    await setHostSubnetIps(w.node.n1, [ip]);
    const snapshot = async () => [
      await onInstances(),
      await hostSubnetIps(w.node.n1),
      await netNamespaceIps(w.ns.x),
    ];
    const before = await snapshot();
    expect(before[0]).toEqual({ [i1!]: [ip] });

    h = Harness.create("adopt-static-aws", { env: { ...motoCredentials, KUBECONFIG: testKubeconfig() } });
    const harness = h;
    await h.program(async () => {
      const pkg = harness.pkg<Pkg>("pulumi-egress-ipam");
      const pool = new pkg.IpPool("egress", { ranges: [{ subnet: "10.0.1.0/24" }], cloudReserved: "aws" });
      const e = new pkg.EgressIp("team", {
        pool,
        namespace: w.ns.x,
        failureDomains: [w.zone("a")],
        provisioner: {
          kind: "ocp-static",
          nodeSelector: w.selector,
          cloud: { kind: "aws", region, endpoint: moto.endpoint },
        },
        adopt: true,
      });
      return { ips: e.ips, hosts: e.hosts };
    });
    const preview = await h.preview();
    expect(preview.planned(`IpAllocation::team-${w.zone("a")}`)?.ip).toBe(ip);
    expect(preview.planned(`EgressIpAssignment::team-${w.zone("a")}`)?.host).toBe(w.node.n1);
    await h.up();
    expect(await snapshot()).toEqual(before);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
    await h.destroy();
    expect(await snapshot()).toEqual([{}, [], []]);
  });
});
