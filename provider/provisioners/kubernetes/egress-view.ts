import { canonicalAddress } from "../../allocator";
import { parseAddress, tryParseAddress } from "../../allocator/address";
import { parsePrefix } from "../../allocator/prefix";
import type { KubeClients } from "../../kube/kube-config";
import { listObjects, type KubeObject, type ObjectRef } from "../../kube/object-edit";

/** API versions of the objects that carry egress IPs. */
export const api = {
  openshiftNetwork: "network.openshift.io/v1",
  ovn: "k8s.ovn.org/v1",
  cloudNetwork: "cloud.network.openshift.io/v1",
  antrea: "crd.antrea.io/v1beta1",
  cilium: "cilium.io/v2",
} as const;

/** The HostSubnet of a node (OpenShift SDN names it after the node). */
export const hostSubnetRef = (node: string): ObjectRef => ({
  apiVersion: api.openshiftNetwork,
  kind: "HostSubnet",
  name: node,
});
/** The NetNamespace of a namespace (same name). */
export const netNamespaceRef = (namespace: string): ObjectRef => ({
  apiVersion: api.openshiftNetwork,
  kind: "NetNamespace",
  name: namespace,
});

/** A string list field of an object (`egressIPs`, `egressCIDRs`), canonical where it parses. */
export function addressList(obj: KubeObject | undefined, field: string): string[] {
  const v = obj?.[field];
  if (!Array.isArray(v)) return [];
  return v.filter((x): x is string => typeof x === "string").map((x) => canonicalOrSame(x));
}

function canonicalOrSame(text: string): string {
  return tryParseAddress(text) ? canonicalAddress(text) : text;
}

/** The EgressIP fields this package reads. */
export interface OvnEgressIp {
  name: string;
  labels: Record<string, string>;
  /** `spec.egressIPs`, canonical. */
  ips: string[];
  /** `spec.namespaceSelector.matchLabels`. */
  selects: Record<string, string>;
  /** `spec.namespaceSelector` as written (matchLabels and matchExpressions). */
  namespaceSelector: LabelSelector;
  /** `spec.podSelector` as written, when it has one (it then serves only those pods). */
  podSelector?: LabelSelector;
  /** Its annotations. */
  annotations: Record<string, string>;
  /** `status.items` as ovnkube wrote them (empty for a status without items; undefined when there is no status). */
  status?: { node: string; egressIP: string }[];
}

/** A Kubernetes label selector (`matchLabels`, `matchExpressions`). */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** Whether `selector` selects an object with `labels` (an empty selector selects everything). */
export function selectorMatches(selector: LabelSelector, labels: Record<string, string>): boolean {
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  return (
    byLabels &&
    (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
      const has = key in labels;
      switch (operator) {
        case "In":
          return has && values.includes(labels[key]!);
        case "NotIn":
          return !has || !values.includes(labels[key]!);
        case "Exists":
          return has;
        case "DoesNotExist":
          return !has;
        default:
          return false;
      }
    })
  );
}

/** Reads an EgressIP object into {@link OvnEgressIp}. */
export function readOvnEgressIp(obj: KubeObject): OvnEgressIp {
  const spec = (obj.spec ?? {}) as {
    egressIPs?: unknown;
    namespaceSelector?: LabelSelector;
    podSelector?: LabelSelector;
  };
  // A status written without items (null: ovnkube's empty list) is a report that places nothing.
  const status = (obj.status ?? undefined) as { items?: unknown } | undefined;
  const items = Array.isArray(status?.items)
    ? (status.items as { node?: unknown; egressIP?: unknown }[])
    : status && typeof status === "object"
      ? []
      : undefined;
  return {
    name: obj.metadata?.name ?? "",
    labels: obj.metadata?.labels ?? {},
    ips: addressList(spec as KubeObject, "egressIPs"),
    selects: (spec.namespaceSelector?.matchLabels ?? {}) as Record<string, string>,
    namespaceSelector: spec.namespaceSelector ?? {},
    ...(podSelectorOf(spec.podSelector) ? { podSelector: spec.podSelector } : {}),
    annotations: obj.metadata?.annotations ?? {},
    status: items?.map((i) => ({
      node: String(i.node ?? ""),
      egressIP: canonicalOrSame(String(i.egressIP ?? "")),
    })),
  };
}

/** The Antrea Egress fields this package reads. */
export interface AntreaEgress {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** `spec.egressIP`, canonical (undefined when Antrea is still to allocate one from a pool). */
  ip?: string;
  /** `spec.appliedTo.namespaceSelector` (an Egress with a podSelector too serves only some pods). */
  namespaceSelector?: LabelSelector;
  podSelector?: LabelSelector;
  /** `status.egressNode`: the Node Antrea put the address on. */
  node?: string;
}

/** Reads an Egress object into {@link AntreaEgress}. */
export function readAntreaEgress(obj: KubeObject): AntreaEgress {
  const spec = (obj.spec ?? {}) as {
    egressIP?: unknown;
    appliedTo?: { namespaceSelector?: LabelSelector; podSelector?: LabelSelector };
  };
  const node = (obj.status as { egressNode?: unknown } | undefined)?.egressNode;
  return {
    name: obj.metadata?.name ?? "",
    labels: obj.metadata?.labels ?? {},
    annotations: obj.metadata?.annotations ?? {},
    ...(typeof spec.egressIP === "string" && spec.egressIP !== ""
      ? { ip: canonicalOrSame(spec.egressIP) }
      : {}),
    ...(spec.appliedTo?.namespaceSelector ? { namespaceSelector: spec.appliedTo.namespaceSelector } : {}),
    ...(spec.appliedTo?.podSelector ? { podSelector: spec.appliedTo.podSelector } : {}),
    ...(typeof node === "string" && node !== "" ? { node } : {}),
  };
}

/** One gateway of a CiliumEgressGatewayPolicy: its egressIP and the Node its nodeSelector pins by hostname. */
export interface CiliumGateway {
  /** `egressIP`, canonical ("" when the gateway uses an interface's address instead). */
  ip: string;
  /** The `kubernetes.io/hostname` its nodeSelector matches, when it pins one Node. */
  node?: string;
}

/** The CiliumEgressGatewayPolicy fields this package reads. */
export interface CiliumPolicy {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** `spec.egressGateways` when it has entries (Cilium then ignores `egressGateway`), else `[spec.egressGateway]`. */
  gateways: CiliumGateway[];
}

/** The Node label a gateway's nodeSelector pins one Node by. */
export const hostnameLabel = "kubernetes.io/hostname";

/** Reads a CiliumEgressGatewayPolicy into {@link CiliumPolicy}. */
export function readCiliumPolicy(obj: KubeObject): CiliumPolicy {
  const spec = (obj.spec ?? {}) as { egressGateway?: unknown; egressGateways?: unknown };
  const list =
    Array.isArray(spec.egressGateways) && spec.egressGateways.length > 0
      ? spec.egressGateways
      : [spec.egressGateway];
  const gateways = list.flatMap((g): CiliumGateway[] => {
    if (!g || typeof g !== "object") return [];
    const { egressIP, nodeSelector } = g as { egressIP?: unknown; nodeSelector?: LabelSelector };
    const node = nodeSelector?.matchLabels?.[hostnameLabel];
    return [{ ip: typeof egressIP === "string" ? canonicalOrSame(egressIP) : "", ...(node ? { node } : {}) }];
  });
  return {
    name: obj.metadata?.name ?? "",
    labels: obj.metadata?.labels ?? {},
    annotations: obj.metadata?.annotations ?? {},
    gateways,
  };
}

/** The address a CloudPrivateIPConfig's name stands for (IPv4, or IPv6 as eight dot-separated hex groups). */
export function cloudPrivateIp(name: string): string | undefined {
  const text = /^[0-9a-f]{4}(\.[0-9a-f]{4}){7}$/.test(name) ? name.replace(/\./g, ":") : name;
  return tryParseAddress(text) ? canonicalAddress(text) : undefined;
}

/** Every egress address the cluster's network objects mention, and where. */
export interface EgressView {
  /** Per HostSubnet (node name): its egressIPs and egressCIDRs. */
  hostSubnets: Map<string, { egressIPs: string[]; egressCIDRs: string[] }>;
  /** Per NetNamespace: its egressIPs. */
  netNamespaces: Map<string, string[]>;
  /** Every EgressIP object. */
  egressIps: OvnEgressIp[];
  /** Addresses of CloudPrivateIPConfig objects. */
  cloudPrivateIps: string[];
  /** Every Antrea Egress object. */
  antreaEgresses: AntreaEgress[];
  /** Every CiliumEgressGatewayPolicy. */
  ciliumPolicies: CiliumPolicy[];
}

/** Lists the six kinds (a kind the cluster does not serve counts as empty). */
export async function readEgressView(kube: KubeClients): Promise<EgressView> {
  const [hs, nn, eip, cpic, egresses, policies] = await Promise.all([
    listObjects(kube, api.openshiftNetwork, "HostSubnet"),
    listObjects(kube, api.openshiftNetwork, "NetNamespace"),
    listObjects(kube, api.ovn, "EgressIP"),
    listObjects(kube, api.cloudNetwork, "CloudPrivateIPConfig"),
    listObjects(kube, api.antrea, "Egress"),
    listObjects(kube, api.cilium, "CiliumEgressGatewayPolicy"),
  ]);
  return {
    hostSubnets: new Map(
      hs.map((o) => [
        o.metadata?.name ?? "",
        { egressIPs: addressList(o, "egressIPs"), egressCIDRs: addressList(o, "egressCIDRs") },
      ]),
    ),
    netNamespaces: new Map(nn.map((o) => [o.metadata?.name ?? "", addressList(o, "egressIPs")])),
    egressIps: eip.map(readOvnEgressIp),
    cloudPrivateIps: cpic.flatMap((o) => {
      const ip = cloudPrivateIp(o.metadata?.name ?? "");
      return ip ? [ip] : [];
    }),
    antreaEgresses: egresses.map(readAntreaEgress),
    ciliumPolicies: policies.map(readCiliumPolicy),
  };
}

/** Every address the view mentions (HostSubnets, NetNamespaces, EgressIP spec and status, cloud configs, Antrea Egresses). */
export function viewAddresses(view: EgressView): string[] {
  return [
    ...view.antreaEgresses.flatMap((e) => (e.ip ? [e.ip] : [])),
    ...view.ciliumPolicies.flatMap((p) => p.gateways.flatMap((g) => (g.ip ? [g.ip] : []))),
    ...[...view.hostSubnets.values()].flatMap((h) => h.egressIPs),
    ...[...view.netNamespaces.values()].flat(),
    ...view.egressIps.flatMap((e) => [...e.ips, ...(e.status ?? []).map((s) => s.egressIP)]),
    ...view.cloudPrivateIps,
  ];
}

/** The addresses of `all` inside one of `cidrs`, canonical, sorted, once each. */
export function addressesWithin(all: string[], cidrs: string[]): string[] {
  const prefixes = cidrs.map((c) => parsePrefix(c));
  const inside = new Map<string, bigint>();
  for (const ip of all) {
    const a = tryParseAddress(ip);
    if (!a) continue;
    if (prefixes.some((p) => p.family === a.family && a.value >= p.network && a.value <= p.last)) {
      inside.set(canonicalAddress(ip), parseAddress(ip).value);
    }
  }
  return [...inside].sort(([, x], [, y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([ip]) => ip);
}

/** A pod selector that selects some pods only (an empty one, like none, selects every pod). */
function podSelectorOf(s: LabelSelector | undefined): LabelSelector | undefined {
  return s && (Object.keys(s.matchLabels ?? {}).length > 0 || (s.matchExpressions ?? []).length > 0)
    ? s
    : undefined;
}
