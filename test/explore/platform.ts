/**
 * A platform world's cluster: four Nodes of the test cluster (the model's hosts a1, a2 in zone za,
 * b1, b2 in zb), the namespaces its EgressIps name, and somebody else's object of the kind beside
 * them, holding an address of the first pool's subnet (`foreignIp`): an EgressIP (ovn), a
 * CiliumEgressGatewayPolicy (cilium), an Egress (antrea), or a NetNamespace and an entry in a1's
 * HostSubnet (ocp-static). The promises: that object stays as it was planted, its address is no
 * EgressIp's, and destroy leaves nothing of the world's on the cluster.
 */
import type * as k8s from "@kubernetes/client-node";
import { kube, setNodeReady } from "../support/kube";
import { sdnWorld, type SdnWorld } from "../support/sdn-world";
import type { PlatformContext } from "./program";
import { domains, type PlatformKind, type World } from "./world";

/** A platform world's cluster as made for one sequence. */
export interface Platform extends PlatformContext {
  kind: PlatformKind;
  /** The model's host of each Node name. */
  nameOf: Record<string, string>;
  /** The address somebody else's object holds. */
  foreignIp: string;
  /** Cluster namespaces made so far. */
  namespaces: Set<string>;
  sdn: SdnWorld<Host>;
}

type Host = "a1" | "a2" | "b1" | "b2";
const hosts: Record<Host, (typeof domains)[number]> = { a1: "za", a2: "za", b1: "zb", b2: "zb" };
const net = "network.openshift.io/v1";

/** Where each kind's objects are: cluster-scoped custom objects. */
const objectKinds: Record<Exclude<PlatformKind, "ocp-static">, { apiVersion: string; kind: string }> = {
  ovn: { apiVersion: "k8s.ovn.org/v1", kind: "EgressIP" },
  cilium: { apiVersion: "cilium.io/v2", kind: "CiliumEgressGatewayPolicy" },
  antrea: { apiVersion: "crd.antrea.io/v1beta1", kind: "Egress" },
};

/** The address somebody else holds: in the first pool's IPv4 subnet (world.ts subnetsOf). */
export const foreignAddress = "10.100.0.3";

/** Makes a platform world's Nodes and plants somebody else's object. */
export async function freshPlatform(kind: PlatformKind): Promise<Platform> {
  const sdn = await sdnWorld<Host>(
    Object.fromEntries(
      Object.entries(hosts).map(([host, zone]) => [
        host,
        {
          zone,
          hostSubnet: kind !== "ocp-static" ? false : host === "a1" ? { egressIPs: [foreignAddress] } : {},
        },
      ]),
    ) as Record<Host, { zone: string; hostSubnet: false | { egressIPs?: string[] } }>,
  );
  const prefix = sdn.zone("");
  const p: Platform = {
    kind,
    selector: sdn.selector,
    zoneOf: Object.fromEntries(domains.map((d) => [d, sdn.zone(d)])),
    namespaceOf: (ns) => `${prefix}${ns}`,
    nameOf: Object.fromEntries(Object.entries(sdn.node).map(([host, node]) => [node, host])),
    foreignIp: foreignAddress,
    namespaces: new Set(),
    sdn,
  };
  await kube().objects.create(foreignObject(p));
  return p;
}

/** Somebody else's object of the platform's kind, named `<world>-foreign`. */
function foreignObject(p: Platform): k8s.KubernetesObject {
  const name = `${p.sdn.zone("foreign")}`;
  const elsewhere = { matchLabels: { team: "elsewhere" } };
  switch (p.kind) {
    case "ovn":
      return {
        ...objectKinds.ovn,
        metadata: { name },
        spec: { egressIPs: [p.foreignIp], namespaceSelector: elsewhere },
      } as k8s.KubernetesObject;
    case "cilium":
      return {
        ...objectKinds.cilium,
        metadata: { name },
        spec: {
          selectors: [{ podSelector: { matchLabels: { app: "other" } } }],
          destinationCIDRs: ["0.0.0.0/0"],
          egressGateway: {
            nodeSelector: { matchLabels: { "kubernetes.io/hostname": p.sdn.node.a1 } },
            egressIP: p.foreignIp,
          },
        },
      } as k8s.KubernetesObject;
    case "antrea":
      return {
        ...objectKinds.antrea,
        metadata: { name },
        spec: { appliedTo: { namespaceSelector: elsewhere }, egressIP: p.foreignIp },
      } as k8s.KubernetesObject;
    case "ocp-static":
      return {
        apiVersion: net,
        kind: "NetNamespace",
        metadata: { name },
        netname: name,
        netid: 9000 + Math.floor(Math.random() * 1000),
        egressIPs: [p.foreignIp],
      } as k8s.KubernetesObject;
  }
}

/** Somebody else's things as they are now: the planted object (and, ocp-static, a1's planted entry). */
export async function platformForeign(p: Platform): Promise<string> {
  const planted = foreignObject(p);
  const o = (await kube().objects.read(planted as never)) as unknown as Record<string, unknown> & {
    metadata: k8s.V1ObjectMeta;
  };
  const { metadata, ...rest } = o;
  const shown: Record<string, unknown> = { labels: metadata.labels, annotations: metadata.annotations };
  for (const [k, v] of Object.entries(rest)) if (k !== "status") shown[k] = v;
  if (p.kind === "ocp-static") {
    const a1 = await hostSubnet(p.sdn.node.a1);
    shown.a1HasPlanted = (a1.egressIPs ?? []).includes(p.foreignIp);
  }
  return JSON.stringify(shown);
}

const hostSubnet = async (node: string) =>
  (await kube().objects.read({ apiVersion: net, kind: "HostSubnet", metadata: { name: node } })) as {
    egressIPs?: string[];
  };

/** Makes the cluster namespaces the world's EgressIps name (and, ocp-static, their NetNamespaces). */
export async function ensureNamespaces(p: Platform, w: World): Promise<void> {
  const { core, objects } = kube();
  for (const h of w.holders) {
    if (h.kind !== "egress") continue;
    const name = p.namespaceOf(h.namespace);
    if (p.namespaces.has(name)) continue;
    await core.createNamespace({ body: { metadata: { name } } });
    if (p.kind === "ocp-static")
      await objects.create({
        apiVersion: net,
        kind: "NetNamespace",
        metadata: { name },
        netname: name,
        netid: 10000 + p.namespaces.size,
      } as k8s.KubernetesObject);
    p.namespaces.add(name);
  }
}

/** A model host's Node set NotReady. */
export const nodeDown = (p: Platform, host: string): Promise<void> =>
  setNodeReady(p.sdn.node[host as Host], false);

/** What of the world's is on the cluster: its objects of the kind, or (ocp-static) its egressIPs. */
export async function platformLeftovers(p: Platform): Promise<string[]> {
  const { objects } = kube();
  if (p.kind !== "ocp-static") {
    const { apiVersion, kind } = objectKinds[p.kind];
    const { items } = await objects.list(apiVersion, kind);
    const ours = `egress-ipam-${p.namespaceOf("")}`;
    return items.flatMap((o) => (o.metadata?.name?.startsWith(ours) ? [`${kind} ${o.metadata.name}`] : []));
  }
  const out: string[] = [];
  for (const [host, node] of Object.entries(p.sdn.node)) {
    const left = ((await hostSubnet(node)).egressIPs ?? []).filter((ip) => ip !== p.foreignIp);
    if (left.length > 0) out.push(`HostSubnet ${host} egressIPs ${left.join(", ")}`);
  }
  for (const ns of p.namespaces) {
    const o = (await objects.read({ apiVersion: net, kind: "NetNamespace", metadata: { name: ns } })) as {
      egressIPs?: string[];
    };
    if ((o.egressIPs ?? []).length > 0) out.push(`NetNamespace ${ns} egressIPs ${o.egressIPs!.join(", ")}`);
  }
  return out;
}

/** Deletes everything the world made on the cluster. */
export async function removePlatform(p: Platform): Promise<void> {
  const { core, objects } = kube();
  await objects.delete(foreignObject(p) as never).catch(() => undefined);
  for (const ns of p.namespaces) {
    if (p.kind === "ocp-static")
      await objects
        .delete({ apiVersion: net, kind: "NetNamespace", metadata: { name: ns } })
        .catch(() => undefined);
    await core.deleteNamespace({ name: ns }).catch(() => undefined);
  }
  await p.sdn.cleanup();
}
