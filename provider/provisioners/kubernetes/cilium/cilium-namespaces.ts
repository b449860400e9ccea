import { canonicalAddress } from "../../../allocator";
import { tryParseAddress } from "../../../allocator/address";
import type { KubeObject } from "../../../kube/object-edit";
import { hostnameLabel, selectorMatches, type LabelSelector } from "../egress-view";
import type { NamespaceFacts, SeenAddress } from "../namespace-addresses";

// Which namespaces a CiliumEgressGatewayPolicy sends out through its gateways, and through which
// Node: what `adopt` and `import` read from a policy written by hand. Pure: the objects are read
// elsewhere.

/** The Pod label Cilium gives every endpoint: its namespace. */
export const podNamespaceLabel = "io.kubernetes.pod.namespace";
/** The prefix of the Pod labels Cilium derives from the namespace's labels. */
const namespaceLabelPrefix = "io.cilium.k8s.namespace.labels.";

/** One entry of a policy's `spec.selectors`. */
export interface CiliumSelector {
  namespaceSelector?: LabelSelector;
  podSelector?: LabelSelector;
  nodeSelector?: LabelSelector;
}

/** One gateway as written: its `egressIP` (canonical; "" for an `interface` gateway) and `nodeSelector`. */
export interface CiliumGatewayEntry {
  ip: string;
  nodeSelector?: LabelSelector;
}

/** The fields of a CiliumEgressGatewayPolicy that adoption and import read. */
export interface CiliumPolicyFacts {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  selectors: CiliumSelector[];
  /** `destinationCIDRs`. */
  destinations: string[];
  /** `excludedCIDRs` ([] when absent). */
  excluded: string[];
  /** `egressGateways` when it has entries (Cilium then ignores `egressGateway`), else `[egressGateway]`. */
  gateways: CiliumGatewayEntry[];
}

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
const isObject = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === "object" && !Array.isArray(v);

/** The raw gateway entries of a policy spec, as Cilium reads them. */
export function gatewayEntries(spec: Record<string, unknown>): Record<string, unknown>[] {
  const list =
    Array.isArray(spec.egressGateways) && spec.egressGateways.length > 0
      ? spec.egressGateways
      : [spec.egressGateway];
  return list.filter(isObject);
}

/** The address of a raw gateway entry, canonical ("" when it names none). */
export function entryAddress(entry: Record<string, unknown>): string {
  const ip = entry.egressIP;
  if (typeof ip !== "string" || ip === "") return "";
  return tryParseAddress(ip) ? canonicalAddress(ip) : ip;
}

/** Reads a CiliumEgressGatewayPolicy into {@link CiliumPolicyFacts}. */
export function readCiliumPolicyFacts(obj: KubeObject): CiliumPolicyFacts {
  const spec = isObject(obj.spec) ? obj.spec : {};
  return {
    name: obj.metadata?.name ?? "",
    labels: obj.metadata?.labels ?? {},
    annotations: obj.metadata?.annotations ?? {},
    selectors: Array.isArray(spec.selectors) ? (spec.selectors.filter(isObject) as CiliumSelector[]) : [],
    destinations: strings(spec.destinationCIDRs),
    excluded: strings(spec.excludedCIDRs),
    gateways: gatewayEntries(spec).map((g) => ({
      ip: entryAddress(g),
      ...(isObject(g.nodeSelector) ? { nodeSelector: g.nodeSelector as LabelSelector } : {}),
    })),
  };
}

const isEmpty = (s: LabelSelector | undefined) =>
  !s || (Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0);

/**
 * Whether a selector entry takes every Pod of the namespace: its podSelector asks only about the
 * namespace (`io.kubernetes.pod.namespace`, or the `io.cilium.k8s.namespace.labels.*` Cilium
 * derives from its labels) and matches it, and its namespaceSelector, when present, matches the
 * namespace's labels. An entry that picks Pods by their own labels or by Node serves some of the
 * namespace's Pods only, never the namespace; an entry with neither selector is rejected by Cilium.
 */
export function selectsNamespace(entry: CiliumSelector, ns: NamespaceFacts): boolean {
  if (!entry.podSelector && !entry.namespaceSelector) return false;
  if (!isEmpty(entry.nodeSelector)) return false;
  const pod = entry.podSelector ?? {};
  const keys = [...Object.keys(pod.matchLabels ?? {}), ...(pod.matchExpressions ?? []).map((e) => e.key)];
  if (keys.some((k) => k !== podNamespaceLabel && !k.startsWith(namespaceLabelPrefix))) return false;
  const asPod: Record<string, string> = { [podNamespaceLabel]: ns.name };
  for (const [k, v] of Object.entries(ns.labels)) asPod[`${namespaceLabelPrefix}${k}`] = v;
  if (!selectorMatches(pod, asPod)) return false;
  return entry.namespaceSelector === undefined || selectorMatches(entry.namespaceSelector, ns.labels);
}

/** Whether the policy sends every Pod of the namespace out through its gateways. */
export const servesNamespace = (p: CiliumPolicyFacts, ns: NamespaceFacts): boolean =>
  p.selectors.some((s) => selectsNamespace(s, ns));

/** A Node as gateway selection sees it. */
export interface LabelledNode {
  name: string;
  labels: Record<string, string>;
}

/** Whether the gateway's Node is pinned by `kubernetes.io/hostname` (no Node list needed). */
export const pinnedNode = (g: CiliumGatewayEntry): string | undefined =>
  g.nodeSelector?.matchLabels?.[hostnameLabel];

/**
 * The Node Cilium sends a gateway's traffic through: the one its `kubernetes.io/hostname` names,
 * else the first by name of those its nodeSelector matches (Cilium's own rule); undefined when
 * none matches.
 */
export function gatewayNode(g: CiliumGatewayEntry, nodes: LabelledNode[]): string | undefined {
  const pinned = pinnedNode(g);
  if (pinned !== undefined) return pinned;
  const matching = nodes.filter((n) => selectorMatches(g.nodeSelector ?? {}, n.labels)).map((n) => n.name);
  return matching.sort()[0];
}

/**
 * The addresses `policies` give namespace `ns`: each gateway address of every policy that serves
 * it (see {@link servesNamespace}), with the Node carrying it (see {@link gatewayNode}).
 */
export function ciliumAddresses(
  policies: CiliumPolicyFacts[],
  ns: NamespaceFacts,
  nodes: LabelledNode[],
): SeenAddress[] {
  const seen = new Map<string, SeenAddress>();
  for (const p of policies) {
    if (!servesNamespace(p, ns)) continue;
    for (const g of p.gateways) {
      if (!g.ip || seen.has(g.ip)) continue;
      const node = gatewayNode(g, nodes);
      seen.set(g.ip, { ip: g.ip, source: `CiliumEgressGatewayPolicy ${p.name}`, ...(node ? { node } : {}) });
    }
  }
  return [...seen.values()];
}

/** Whether any gateway of the policies serving `ns` needs the Node list (its Node is not pinned by hostname). */
export const needsNodes = (policies: CiliumPolicyFacts[], ns: NamespaceFacts): boolean =>
  policies.some((p) => servesNamespace(p, ns) && p.gateways.some((g) => g.ip && pinnedNode(g) === undefined));
