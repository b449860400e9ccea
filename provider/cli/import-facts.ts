import { canonicalAddress } from "../allocator";
import { tryParseAddress } from "../allocator/address";
import type { KubeClients } from "../kube/kube-config";
import { kubeFailure } from "../kube/kube-errors";
import { listObjects } from "../kube/object-edit";
import type { NamespaceFacts } from "../provisioners/kubernetes/namespace-addresses";
import {
  readAntreaEgressFacts,
  type AntreaEgressFacts,
} from "../provisioners/kubernetes/antrea/antrea-namespaces";
import {
  readCiliumPolicyFacts,
  type CiliumPolicyFacts,
} from "../provisioners/kubernetes/cilium/cilium-namespaces";
import { managedBy } from "../provisioners/kubernetes/managed-by";
import { ownersAnnotation, readOwners, thereBefore } from "../provisioners/kubernetes/owners";
import {
  api,
  cloudPrivateIp,
  readEgressView,
  type EgressView,
  type LabelSelector,
} from "../provisioners/kubernetes/egress-view";

/** The egressip-ipam-operator's API version and kind. */
export const egressIpamApi = { apiVersion: "redhatcop.redhat.io/v1alpha1", kind: "EgressIPAM" } as const;

/** One `EgressIPAM` object of the egressip-ipam-operator, as `import` reads it. */
export interface EgressIpamFacts {
  name: string;
  /** The Node label whose values name the groups of nodes (`spec.topologyLabel`). */
  topologyLabel: string;
  /** The nodes it manages (`spec.nodeSelector`). */
  nodeSelector: LabelSelector;
  /** `spec.cidrAssignments`, in order: a namespace gets one address of each. */
  cidrs: { cidr: string; labelValue: string; reservedIPs: string[] }[];
}

/** A Node as `import` needs it. */
export interface NodeFacts {
  name: string;
  labels: Record<string, string>;
  /** Its InternalIP and ExternalIP addresses (the operator never hands those out). */
  addresses: string[];
  /** `spec.providerID`, e.g. `aws:///us-east-1a/i-0abc…`. */
  providerID?: string;
}

/** Everything `import` reads from a cluster: read-only, one list call per kind. */
export interface ClusterFacts {
  context: string;
  server: string;
  egressIpams: EgressIpamFacts[];
  nodes: NodeFacts[];
  namespaces: NamespaceFacts[];
  /** HostSubnets, NetNamespaces and EgressIP objects. */
  view: EgressView;
  /** CiliumEgressGatewayPolicies with their selectors, destinations and gateways' nodeSelectors. */
  ciliumPolicies: CiliumPolicyFacts[];
  /** Antrea Egresses with their appliedTo, addresses and externalIPPool. */
  antreaEgresses: AntreaEgressFacts[];
  /** CloudPrivateIPConfig objects: the address and the node OVN-Kubernetes asked the cloud to put it on. */
  cloudPrivateIps: { ip: string; node: string }[];
  /** Addresses a stack of this package already holds, and what records it (never imported again). */
  managed: Map<string, string>;
}

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
const canonical = (ip: string) => (tryParseAddress(ip) ? canonicalAddress(ip) : ip);

/** Reads the egress configuration of the cluster `kube` talks to (a kind it does not serve reads as none). */
export async function readClusterFacts(kube: KubeClients): Promise<ClusterFacts> {
  const [ipams, nodes, namespaces, view, cpics, netNamespaces, policies, egresses] = await Promise.all([
    listObjects(kube, egressIpamApi.apiVersion, egressIpamApi.kind),
    kube.core.listNode().catch((e: unknown) => Promise.reject(kubeFailure("listing Nodes", e, kube))),
    kube.core
      .listNamespace()
      .catch((e: unknown) => Promise.reject(kubeFailure("listing Namespaces", e, kube))),
    readEgressView(kube),
    listObjects(kube, api.cloudNetwork, "CloudPrivateIPConfig"),
    listObjects(kube, api.openshiftNetwork, "NetNamespace"),
    listObjects(kube, api.cilium, "CiliumEgressGatewayPolicy").then((l) => l.map(readCiliumPolicyFacts)),
    listObjects(kube, api.antrea, "Egress").then((l) => l.map(readAntreaEgressFacts)),
  ]);
  const managed = new Map<string, string>();
  for (const o of netNamespaces) {
    for (const [ip, who] of Object.entries(readOwners(o, [])))
      if (who.some((w) => w !== thereBefore))
        managed.set(canonical(ip), `${ownersAnnotation} of NetNamespace ${o.metadata?.name}`);
  }
  const [key, value] = Object.entries(managedBy)[0]!;
  for (const e of view.egressIps)
    if (e.labels[key] === value)
      for (const ip of e.ips) managed.set(ip, `EgressIP ${e.name} (${key}=${value})`);
  for (const p of policies)
    if (p.labels[key] === value)
      for (const g of p.gateways)
        if (g.ip) managed.set(g.ip, `CiliumEgressGatewayPolicy ${p.name} (${key}=${value})`);
  for (const e of egresses)
    if (e.labels[key] === value)
      for (const ip of e.ips) managed.set(ip, `Egress ${e.name} (${key}=${value})`);
  return {
    context: kube.context,
    server: kube.server,
    egressIpams: ipams.map((o) => {
      const spec = (o.spec ?? {}) as Record<string, unknown>;
      const cidrs = Array.isArray(spec.cidrAssignments)
        ? (spec.cidrAssignments as Record<string, unknown>[])
        : [];
      return {
        name: o.metadata?.name ?? "",
        topologyLabel: typeof spec.topologyLabel === "string" ? spec.topologyLabel : "",
        nodeSelector: (spec.nodeSelector ?? {}) as LabelSelector,
        cidrs: cidrs.map((c) => ({
          cidr: String(c.CIDR ?? ""),
          labelValue: String(c.labelValue ?? ""),
          reservedIPs: strings(c.reservedIPs).map(canonical),
        })),
      };
    }),
    nodes: nodes.items.map((n) => ({
      name: n.metadata?.name ?? "",
      labels: n.metadata?.labels ?? {},
      addresses: (n.status?.addresses ?? [])
        .filter((a) => a.type === "InternalIP" || a.type === "ExternalIP")
        .map((a) => canonical(a.address)),
      ...(n.spec?.providerID ? { providerID: n.spec.providerID } : {}),
    })),
    namespaces: namespaces.items.map((n) => ({
      name: n.metadata?.name ?? "",
      labels: n.metadata?.labels ?? {},
      annotations: n.metadata?.annotations ?? {},
    })),
    view,
    ciliumPolicies: policies,
    antreaEgresses: egresses,
    cloudPrivateIps: cpics.flatMap((o) => {
      const ip = cloudPrivateIp(o.metadata?.name ?? "");
      const node = (o.spec as { node?: unknown } | undefined)?.node;
      return ip && typeof node === "string" ? [{ ip, node }] : [];
    }),
    managed,
  };
}
