import { canonicalAddress } from "../../../allocator";
import { tryParseAddress } from "../../../allocator/address";
import type { KubeObject } from "../../../kube/object-edit";
import { selectorMatches, type LabelSelector } from "../egress-view";
import { isManaged } from "../managed-by";
import type { NamespaceFacts, SeenAddress } from "../namespace-addresses";
import { adoptedForAnnotation } from "../namespace-marks";

// Which namespaces an Antrea Egress serves, with which addresses and on which Node: what `adopt`
// and `import` read from an Egress written by hand. Pure: the objects are read elsewhere.

/** The fields of an Egress that adoption and import read. */
export interface AntreaEgressFacts {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** `spec.egressIP`, or the non-empty `spec.egressIPs` (dual stack), canonical. */
  ips: string[];
  /** Whether the addresses are `egressIPs` (a list), not `egressIP`. */
  listed: boolean;
  namespaceSelector?: LabelSelector;
  podSelector?: LabelSelector;
  /** `spec.externalIPPool`. */
  externalIPPool?: string;
  /** `status.egressNode`: the Node Antrea put the address on. */
  node?: string;
}

const canonical = (ip: string) => (tryParseAddress(ip) ? canonicalAddress(ip) : ip);
const isObject = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === "object" && !Array.isArray(v);

/** Reads an Egress into {@link AntreaEgressFacts}. */
export function readAntreaEgressFacts(obj: KubeObject): AntreaEgressFacts {
  const spec = isObject(obj.spec) ? obj.spec : {};
  const appliedTo = isObject(spec.appliedTo) ? spec.appliedTo : {};
  const listed = Array.isArray(spec.egressIPs);
  const ips = listed
    ? (spec.egressIPs as unknown[]).filter((x): x is string => typeof x === "string" && x !== "")
    : typeof spec.egressIP === "string" && spec.egressIP !== ""
      ? [spec.egressIP]
      : [];
  const node = isObject(obj.status) ? obj.status.egressNode : undefined;
  return {
    name: obj.metadata?.name ?? "",
    labels: obj.metadata?.labels ?? {},
    annotations: obj.metadata?.annotations ?? {},
    ips: ips.map(canonical),
    listed,
    ...(isObject(appliedTo.namespaceSelector)
      ? { namespaceSelector: appliedTo.namespaceSelector as LabelSelector }
      : {}),
    ...(isObject(appliedTo.podSelector) ? { podSelector: appliedTo.podSelector as LabelSelector } : {}),
    ...(typeof spec.externalIPPool === "string" && spec.externalIPPool !== ""
      ? { externalIPPool: spec.externalIPPool }
      : {}),
    ...(typeof node === "string" && node !== "" ? { node } : {}),
  };
}

const isEmpty = (s: LabelSelector | undefined) =>
  !s || (Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0);

/**
 * Whether the Egress applies to every Pod of the namespace: its namespaceSelector matches the
 * namespace's labels, or it has none and an empty podSelector (every Pod of the cluster); a
 * podSelector with labels serves some Pods only, never the namespace.
 */
export function servesNamespace(e: AntreaEgressFacts, ns: NamespaceFacts): boolean {
  if (!isEmpty(e.podSelector)) return false;
  if (e.namespaceSelector) return selectorMatches(e.namespaceSelector, ns.labels);
  return e.podSelector !== undefined;
}

/** The addresses `egresses` give namespace `ns`, each with the Node Antrea put it on (`status.egressNode`). */
export function antreaAddresses(egresses: AntreaEgressFacts[], ns: NamespaceFacts): SeenAddress[] {
  const seen = new Map<string, SeenAddress>();
  for (const e of egresses) {
    if (!servesNamespace(e, ns)) continue;
    for (const ip of e.ips) {
      // `status.egressNode` is the Node of the one address Antrea has placed (egressIP).
      const node = e.listed ? undefined : e.node;
      if (!seen.has(ip)) seen.set(ip, { ip, source: `Egress ${e.name}`, ...(node ? { node } : {}) });
    }
  }
  return [...seen.values()];
}

/**
 * The name of the Egress an adoption took over for `ip` of `namespace` (managed, annotated
 * `egress-ipam/namespace` as an adopted OVN EgressIP object is), if any.
 */
export function adoptedEgress(
  egresses: AntreaEgressFacts[],
  namespace: string,
  ip: string,
): string | undefined {
  return egresses.find(
    (e) => isManaged(e.labels) && e.annotations[adoptedForAnnotation] === namespace && e.ips.includes(ip),
  )?.name;
}
