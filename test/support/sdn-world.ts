// A small cluster world for the provisioner tests: Nodes carrying a per-test label (the
// provisioner's nodeSelector matches only them), their HostSubnets as the OpenShift SDN master makes
// them, and namespaces with their NetNamespaces. Everything it made is deleted by `cleanup`.
import type * as k8s from "@kubernetes/client-node";
import {
  createHostSubnet,
  createNode,
  deleteClusterObjects,
  kube,
  testKubeconfig,
  uniqueName,
  type NodeSpec,
} from "./kube";
import { ovnObjectName } from "../../provider/provisioners/kubernetes/ovn/ovn";

/** One Node of a world; `hostSubnet: false` leaves it without one (not part of the SDN). */
export interface WorldNode extends Partial<NodeSpec> {
  zone: string;
  hostSubnet?: false | { egressIPs?: string[]; egressCIDRs?: string[] };
}

/** What {@link sdnWorld} made. */
export interface SdnWorld<N extends string = string, S extends string = string> {
  /** The per-test label every Node carries: give it as the provisioner's nodeSelector. */
  selector: Record<string, string>;
  /** Node names by the keys given. */
  node: Record<N, string>;
  /** Namespace names by the keys given. */
  ns: Record<S, string>;
  /** Per-test zone names by the keys given (`zone("a")`). */
  zone: (key: string) => string;
  cleanup(): Promise<void>;
}

const net = "network.openshift.io/v1";
let hostIp = 1;
let netid = 100;

/** A world of Nodes (by key) and namespaces (by key); zones are made unique per world. */
export async function sdnWorld<N extends string, S extends string = never>(
  nodes: Record<N, WorldNode>,
  namespaces: S[] = [],
  options: { netNamespaces?: boolean } = {},
): Promise<SdnWorld<N, S>> {
  process.env.KUBECONFIG = testKubeconfig();
  const id = uniqueName("w");
  const selector = { [`egress-test/${id}`]: "true" };
  const zone = (key: string) => `${id}-${key}`;
  const node = {} as Record<N, string>;
  const ns = {} as Record<S, string>;
  const made: { nodes: string[]; hostSubnets: string[]; namespaces: string[] } = {
    nodes: [],
    hostSubnets: [],
    namespaces: [],
  };
  for (const [key, spec] of Object.entries(nodes) as [N, WorldNode][]) {
    const name = `${id}-${key}`;
    node[key] = name;
    await createNode(name, { ...spec, zone: zone(spec.zone), labels: { ...selector, ...spec.labels } });
    made.nodes.push(name);
    if (spec.hostSubnet !== false) {
      const n = hostIp++;
      await createHostSubnet(name, {
        hostIP: `172.16.${(n >> 8) & 255}.${n & 255}`,
        subnet: `10.128.${(n * 2) & 254}.0/23`,
        ...spec.hostSubnet,
      });
      made.hostSubnets.push(name);
    }
  }
  const { core, objects } = kube();
  for (const key of namespaces) {
    const name = `${id}-${key}`;
    ns[key] = name;
    await core.createNamespace({ body: { metadata: { name } } });
    made.namespaces.push(name);
    if (options.netNamespaces !== false) {
      await objects.create({
        apiVersion: net,
        kind: "NetNamespace",
        metadata: { name },
        netname: name,
        netid: netid++,
      } as k8s.KubernetesObject);
    }
  }
  return {
    selector,
    node,
    ns,
    zone,
    async cleanup() {
      await deleteClusterObjects(net, "HostSubnet", made.hostSubnets);
      await deleteClusterObjects(net, "NetNamespace", made.namespaces);
      await deleteClusterObjects(
        "k8s.ovn.org/v1",
        "EgressIP",
        made.namespaces.map((n) => `egress-ipam-${n}`),
      );
      await deleteClusterObjects("v1", "Node", made.nodes);
      await Promise.all(made.namespaces.map((name) => core.deleteNamespace({ name }).catch(() => undefined)));
    },
  };
}

/** A list field of a cluster-scoped object (`[]` when the object or field is absent). */
export async function listField(
  apiVersion: string,
  kind: string,
  name: string,
  field: string,
): Promise<string[]> {
  try {
    const o = (await kube().objects.read({ apiVersion, kind, metadata: { name } })) as Record<
      string,
      unknown
    >;
    return (o[field] as string[] | undefined) ?? [];
  } catch (err) {
    if ((err as { code?: number }).code === 404) return [];
    throw err;
  }
}

/** `HostSubnet.egressIPs` of a node. */
export const hostSubnetIps = (node: string) => listField(net, "HostSubnet", node, "egressIPs");
/** `HostSubnet.egressCIDRs` of a node. */
export const hostSubnetCidrs = (node: string) => listField(net, "HostSubnet", node, "egressCIDRs");
/** `NetNamespace.egressIPs` of a namespace. */
export const netNamespaceIps = (ns: string) => listField(net, "NetNamespace", ns, "egressIPs");

/** `spec.egressIPs` of the EgressIP object this package writes for a namespace (`[]` when there is none). */
export async function egressIpObjectIps(namespace: string): Promise<string[]> {
  try {
    const o = (await kube().objects.read({
      apiVersion: "k8s.ovn.org/v1",
      kind: "EgressIP",
      metadata: { name: ovnObjectName(namespace) },
    })) as k8s.KubernetesObject & { spec?: { egressIPs?: string[] } };
    return o.spec?.egressIPs ?? [];
  } catch (err) {
    if ((err as { code?: number }).code === 404) return [];
    throw err;
  }
}

/** Writes `HostSubnet.egressIPs` directly, as another writer (or a person) would. */
export async function setHostSubnetIps(node: string, ips: string[]): Promise<void> {
  const { objects } = kube();
  const o = (await objects.read({ apiVersion: net, kind: "HostSubnet", metadata: { name: node } })) as Record<
    string,
    unknown
  >;
  await objects.replace({ ...o, egressIPs: ips } as k8s.KubernetesObject);
}

/**
 * Appends `ip` to a HostSubnet's egressIPs as a careful writer other than this package does: one
 * read, one replace carrying that read's resourceVersion, again on 409.
 */
export async function foreignAdd(node: string, ip: string): Promise<void> {
  const { objects } = kube();
  for (;;) {
    const o = (await objects.read({
      apiVersion: net,
      kind: "HostSubnet",
      metadata: { name: node },
    })) as Record<string, unknown>;
    try {
      await objects.replace({
        ...o,
        egressIPs: [...((o.egressIPs as string[]) ?? []), ip],
      } as k8s.KubernetesObject);
      return;
    } catch (err) {
      if ((err as { code?: number }).code !== 409) throw err;
    }
  }
}
