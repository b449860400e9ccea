import { IpamError } from "../../../core/ipam-error";
import { podNamespaceLabel, servesNamespace, type CiliumPolicyFacts } from "./cilium-namespaces";
import { policyFamily } from "./cilium-policy";
import type { LabelSelector } from "../egress-view";
import { isManaged } from "../managed-by";
import type { NamespaceFacts } from "../namespace-addresses";
import { readOwners, recordedForOnly } from "../owners";
import type { PlacementRequest } from "../../placement-request";
import {
  overlapAdvice,
  podSelectorsOverlap,
  refuseHandMade,
  selectionName,
  type PodSelection,
} from "../pod-selection";

// Which pods of a namespace the cluster's CiliumEgressGatewayPolicies already send out, by pod
// selector: two policies that select one pod for the same family's destinations compete (Cilium
// keeps one), so an EgressIp whose pods may overlap another policy's of the namespace is refused
// at preview. The policies are read elsewhere.

/**
 * The pods of `namespace` a policy selects by pod labels: for each `selectors` entry whose
 * podSelector names the namespace (`io.kubernetes.pod.namespace`) with neither namespaceSelector
 * nor nodeSelector, its podSelector without that label (empty: every pod). Entries selecting
 * otherwise (every namespace's pods with some labels, namespaces by their labels) are not the
 * namespace's own and are left out, as for OVN's objects selecting a namespace by name.
 */
export function namespaceSelections(p: CiliumPolicyFacts, namespace: string): LabelSelector[] {
  return p.selectors.flatMap((entry) => {
    const pod = entry.podSelector;
    if (!pod || entry.namespaceSelector || entry.nodeSelector) return [];
    if (pod.matchLabels?.[podNamespaceLabel] !== namespace) return [];
    const { [podNamespaceLabel]: _ns, ...labels } = pod.matchLabels;
    return [
      {
        matchLabels: labels,
        ...(pod.matchExpressions?.length ? { matchExpressions: pod.matchExpressions } : {}),
      },
    ];
  });
}

const picksPods = (s: LabelSelector) =>
  Object.keys(s.matchLabels ?? {}).length > 0 || (s.matchExpressions ?? []).length > 0;

/**
 * Refuses the selection `podSelector` of `namespace` for gateways of `family` when a policy other
 * than `own` (this selection's policy of that family) selects pods of the namespace that it may
 * take too, for the same family. Namespace-wide policies beside each other are as before (one of
 * this package: its owner records decide; one written by hand: see {@link refuseHandMadePolicy}).
 * `holder` names the assignment's resource and `holderOwners` reads its owner records: a policy whose
 * every gateway is recorded for these alone (the holder's selection before this change, which the
 * same update takes its gateways out of) is no other selection.
 * @throws IpamError SCOPE_CONFLICT naming the policy, its owners and what to do.
 */
export async function refuseSelectionOverlap(
  policies: CiliumPolicyFacts[],
  namespace: string,
  own: string,
  family: 4 | 6,
  podSelector: PodSelection,
  { holder, holderOwners }: Pick<PlacementRequest, "holder" | "holderOwners">,
): Promise<void> {
  const mine = podSelector ? { matchLabels: podSelector } : undefined;
  for (const p of policies) {
    if (p.name === own || p.gateways.length === 0 || policyFamily(p) !== family) continue;
    const theirs = namespaceSelections(p, namespace).find(
      (s) => (mine !== undefined || picksPods(s)) && podSelectorsOverlap(mine, picksPods(s) ? s : undefined),
    );
    if (!theirs) continue;
    const managed = isManaged(p.labels);
    const records = managed ? readOwners({ metadata: { annotations: p.annotations } }, []) : {};
    const gateways = p.gateways.map((g) => g.ip);
    if (managed && recordedForOnly(records, gateways, await holderOwners())) continue;
    const owners = [...new Set(Object.values(records).flat())];
    const selects = picksPods(theirs) ? `pods ${JSON.stringify(theirs.matchLabels)}` : "every pod";
    throw new IpamError(
      "SCOPE_CONFLICT",
      `${holder}: CiliumEgressGatewayPolicy ${p.name} already sends ${selects} of namespace ${namespace} out ` +
        `through IPv${family} gateways${owners.length > 0 ? ` (its gateways are ${owners.join(", ")}'s)` : ""}, and ` +
        `this EgressIp's ${selectionName(podSelector)} can select the same pods, whose traffic Cilium would ` +
        `send through one of the two policies only: ${overlapAdvice}`,
    );
  }
}

/**
 * Refuses the selection `podSelector` of namespace `ns` for gateways of `family` beside a policy
 * made by hand (not managed by this package) that sends every Pod of the namespace out through
 * gateways of that family, however its selectors take them (see {@link servesNamespace}): Cilium
 * would send the Pods through one of the two. `adopting` (`adopt: true` without a pod selector)
 * takes such a policy over instead (see cilium-adopt.ts). `holder` names the assignment's resource.
 * @throws IpamError SCOPE_CONFLICT naming the policy and what to do (see refuseHandMade).
 */
export function refuseHandMadePolicy(
  policies: CiliumPolicyFacts[],
  ns: NamespaceFacts,
  family: 4 | 6,
  podSelector: PodSelection,
  adopting: boolean,
  holder: string,
): void {
  if (adopting && !podSelector) return;
  const p = policies.find(
    (p) =>
      !isManaged(p.labels) && p.gateways.length > 0 && policyFamily(p) === family && servesNamespace(p, ns),
  );
  if (p) refuseHandMade(holder, ns.name, `CiliumEgressGatewayPolicy ${p.name}`, podSelector);
}
