import { addressFamily } from "../../../allocator/address";
import type { PlacementRequest } from "../../placement-request";
import { IpamError } from "../../../core/ipam-error";
import { servesNamespace, type AntreaEgressFacts } from "./antrea-namespaces";
import type { LabelSelector } from "../egress-view";
import { isManaged } from "../managed-by";
import { namespaceNameLabel } from "../namespace-marks";
import type { NamespaceFacts } from "../namespace-addresses";
import { readOwners, recordedForOnly, type Owners } from "../owners";
import {
  overlapAdvice,
  podSelectorsOverlap,
  refuseHandMade,
  selectionName,
  type PodSelection,
  type SelectionClaim,
} from "../pod-selection";

// Antrea applies one Egress to a Pod: when several apply, it takes one of them, whatever their
// families. So the Egresses of one namespace may differ only where they cannot take the same Pod:
// two pod selections that may overlap are refused, and so are an IPv4 and an IPv6 address for the
// same Pods (the Pods would leave with one family's address only). Antrea's dual-stack Egress
// (`egressIPs`, one address per family, on one Node) is refused by antrea-controller's admission
// webhook ("spec.egressIPs is not supported yet"), so dual stack cannot be had on this kind. Pure:
// the Egresses and the deployment's claims are read elsewhere.

/** An Egress of the namespace, or another EgressIp of the deployment, and the Pods it serves. */
export interface AntreaServing {
  /** For messages: `Egress egress-ipam-team-a-10.0.0.5 (stack-1 urn:…'s)`, `EgressIp web of this stack`. */
  what: string;
  /** Its Pods by label (undefined: every Pod of the namespace). */
  selector?: LabelSelector;
  families: (4 | 6)[];
  /** Its addresses and whom each is recorded for, when it is an Egress of this package's. */
  records?: { ips: string[]; owners: Owners };
}

const picksPods = (s: LabelSelector | undefined): s is LabelSelector =>
  !!s && (Object.keys(s.matchLabels ?? {}).length > 0 || (s.matchExpressions ?? []).length > 0);

/** A selector's canonical JSON (keys sorted), to tell two selections apart. */
const canonical = (s: LabelSelector | undefined): string =>
  JSON.stringify(s ? s : null, (_k, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );

/**
 * The Egresses that apply to Pods of `namespace` by its name (`appliedTo.namespaceSelector` on
 * `kubernetes.io/metadata.name`), but the one holding `ip`: each with its Pods and families.
 */
export function namespaceEgresses(
  egresses: AntreaEgressFacts[],
  namespace: string,
  ip: string,
): AntreaServing[] {
  return egresses.flatMap((e) => {
    if (e.ips.includes(ip) || e.ips.length === 0) return [];
    if (e.namespaceSelector?.matchLabels?.[namespaceNameLabel] !== namespace) return [];
    const records = isManaged(e.labels) ? readOwners({ metadata: { annotations: e.annotations } }, []) : {};
    const owners = [...new Set(Object.values(records).flat())];
    return [
      {
        what: `Egress ${e.name}${owners.length > 0 ? ` (${owners.join(", ")}'s)` : ""}`,
        ...(picksPods(e.podSelector) ? { selector: e.podSelector } : {}),
        families: [...new Set(e.ips.map((x) => addressFamily(x)))],
        ...(isManaged(e.labels) ? { records: { ips: e.ips, owners: records } } : {}),
      },
    ];
  });
}

/** The claims of the deployment's other EgressIps, and this one's other family, as servings. */
export function claimedServings(claims: SelectionClaim[]): AntreaServing[] {
  return claims.map((c) => ({
    what: `${c.holder} of this stack`,
    ...(c.podSelector ? { selector: { matchLabels: c.podSelector } } : {}),
    families: [c.family],
  }));
}

/**
 * Refuses the request's `ip` of the EgressIp `holder` for the Pods `podSelector` selects in `namespace` when one
 * of `others` may apply to the same Pods with another selection, or with an address of the other
 * family. The same selection of the same family is the namespace's addresses side by side (one per
 * failure domain), as before. An Egress recorded for `mine` alone (the holder's owner records: see
 * PlacementRequest.holderOwners) serves its selection before this change, which the same update
 * takes its addresses out of: not another selection.
 * @throws IpamError SCOPE_CONFLICT naming the other, both selections and what to do.
 */
export function refuseAntreaSharing(
  { holder, ip, family }: PlacementRequest,
  namespace: string,
  podSelector: Record<string, string> | undefined,
  others: AntreaServing[],
  mine: ReadonlySet<string> = new Set(),
): void {
  const selection = podSelector ? { matchLabels: podSelector } : undefined;
  for (const o of others) {
    if (!podSelectorsOverlap(selection, o.selector)) continue;
    const same = canonical(selection) === canonical(o.selector);
    const selects = o.selector ? `pods ${JSON.stringify(o.selector.matchLabels ?? o.selector)}` : "every pod";
    const other = o.families.find((f) => f !== family);
    if (other !== undefined) {
      throw new IpamError(
        "SCOPE_CONFLICT",
        `${holder} gives ${ip}, an IPv${family} address, to ${same ? "the" : "some of the"} Pods of namespace ` +
          `${namespace} that ${o.what} gives an IPv${other} address (it serves ${selects}): Antrea applies one ` +
          `Egress to a Pod, so they would leave with one family's address only, and its dual-stack Egress ` +
          `(egressIPs) is refused by antrea-controller ("spec.egressIPs is not supported yet"): give these Pods ` +
          `one family (families: "ipv4" or "ipv6" on the EgressIp)`,
      );
    }
    if (same || (!selection && !picksPods(o.selector))) continue;
    if (o.records && recordedForOnly(o.records.owners, o.records.ips, mine)) continue;
    throw new IpamError(
      "SCOPE_CONFLICT",
      `${holder}: ${o.what} already serves ${selects} of namespace ${namespace}, and this EgressIp's ` +
        `${selectionName(podSelector)} can select the same pods, of which Antrea applies one Egress: ${overlapAdvice}`,
    );
  }
}

/**
 * Refuses the Pods `podSelector` selects in namespace `ns` beside an Egress made by hand (not
 * managed by this package) that applies to every Pod of the namespace, however its appliedTo takes
 * them (see {@link servesNamespace}), and has an address or an externalIPPool to get one from:
 * Antrea applies one Egress to a Pod, whatever their families. `adopting` (`adopt: true` without a
 * pod selector) takes such an Egress over instead (see antrea-adopt.ts). `holder` names the
 * assignment's resource.
 * @throws IpamError SCOPE_CONFLICT naming the Egress and what to do (see refuseHandMade).
 */
export function refuseHandMadeEgress(
  egresses: AntreaEgressFacts[],
  ns: NamespaceFacts,
  podSelector: PodSelection,
  adopting: boolean,
  holder: string,
): void {
  if (adopting && !podSelector) return;
  const e = egresses.find(
    (e) =>
      !isManaged(e.labels) && (e.ips.length > 0 || e.externalIPPool !== undefined) && servesNamespace(e, ns),
  );
  if (e) refuseHandMade(holder, ns.name, `Egress ${e.name}`, podSelector);
}
