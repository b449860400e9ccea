import { shellCommand } from "../../../core/text";
import type { ObjectRef } from "../../../kube/object-edit";
import type { Placement } from "../../egress-ip-provisioner";
import { addressesWithin, api, hostnameLabel, type CiliumGateway, type EgressView } from "../egress-view";
import type { AddressLocations } from "../node-planner";
import { isManaged } from "../managed-by";
import { readOwners } from "../owners";
import { adoptedForAnnotation } from "../namespace-marks";
import { podNamespaceLabel } from "./cilium-namespaces";
import { selectionHash } from "../pod-selection";
import { addressFamily, tryParseAddress } from "../../../allocator/address";
import type { PolicyScope } from "./cilium-destinations";

// The CiliumEgressGatewayPolicy objects of the cilium kind: their names, the spec written for a
// namespace's gateways, and what planning and `check` read back from the cluster's policies.

/**
 * Which of a namespace's policies: the one of its gateways' family (Cilium SNATs a family's
 * traffic to an egressIP of that family, so each family has a policy of its own, sending that
 * family's destinations) and of the pods it selects (all, or those of a pod selector).
 */
export interface PolicySelection {
  /** Default 4. */
  family?: 4 | 6;
  podSelector?: Record<string, string>;
}

/**
 * The name of the CiliumEgressGatewayPolicy that holds a namespace's gateways: `egress-ipam-<namespace>`
 * for its IPv4 addresses serving every pod (the name every earlier version wrote), plus
 * `.<10 hex of the selector>` for a pod selector's and `.ipv6` for IPv6 addresses. A namespace's
 * name has no `.`, so no two namespaces' names meet (with `-`, namespace `a-ipv6` would be `a`'s
 * IPv6 policy).
 */
export const ciliumObjectName = (namespace: string, selection: PolicySelection = {}): string =>
  `egress-ipam-${namespace}${selection.podSelector ? `.${selectionHash(selection.podSelector)}` : ""}` +
  `${selection.family === 6 ? ".ipv6" : ""}`;

/** The family of a policy's gateways (its first egressIP's; 4 when none names one). */
export function policyFamily(p: { gateways?: { ip: string }[] }): 4 | 6 {
  const ip = (p.gateways ?? []).find((g) => g.ip && tryParseAddress(g.ip))?.ip;
  return ip ? addressFamily(ip) : 4;
}

/** The policy object of that name. */
export const policyRef = (name: string): ObjectRef => ({
  apiVersion: api.cilium,
  kind: "CiliumEgressGatewayPolicy",
  name,
});
export { isManaged } from "../managed-by";

/**
 * Where the policies pin each address, and the policy each is in (one adopted for a namespace
 * keyed as {@link ciliumObjectName} of it and its family, the name planning asks by).
 */
export function ciliumLocations(view: EgressView): AddressLocations {
  const nodeOf = new Map<string, string>();
  const groupOf = new Map<string, string>();
  for (const p of view.ciliumPolicies) {
    const adoptedFor = isManaged(p.labels) ? p.annotations[adoptedForAnnotation] : undefined;
    const key = adoptedFor ? ciliumObjectName(adoptedFor, { family: policyFamily(p) }) : p.name;
    for (const g of p.gateways) {
      if (!g.ip) continue;
      if (g.node) nodeOf.set(g.ip, g.node);
      groupOf.set(g.ip, key);
    }
  }
  return { nodeOf, groupOf };
}

/**
 * The spec of a namespace's policy with these gateways (in order): its `selectors` take the
 * namespace's Pods (only those with `podSelector`'s labels, when given), and it sends `scope` (the
 * provisioner's destinations and excluded of the gateways' family, see scopeOf).
 */
export function policySpec(
  namespace: string,
  gateways: CiliumGateway[],
  scope: PolicyScope,
  podSelector?: Record<string, string>,
) {
  const entries = gateways.map((g) => ({
    nodeSelector: { matchLabels: { [hostnameLabel]: g.node } },
    egressIP: g.ip,
  }));
  // Sorted, as the API server gives a map back: a comparison with what it returns is then exact.
  const labels = Object.fromEntries(
    Object.entries({ ...podSelector, [podNamespaceLabel]: namespace }).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    ),
  );
  return {
    selectors: [{ podSelector: { matchLabels: labels } }],
    destinationCIDRs: scope.destinations,
    excludedCIDRs: scope.excluded.length > 0 ? scope.excluded : null,
    egressGateway: entries[0],
    egressGateways: entries,
  };
}

/**
 * Where `check` sees the policies' addresses: each gateway address inside `cidrs` on the Node it
 * pins, with the owner record of a policy this package manages, and the command that removes it
 * (the policy when it has one gateway; else its entry, tested first so that a list changed since
 * fails instead of losing another address). A gateway pinned to another Node than state says is
 * re-pinned in place by refresh and up: the policy is the namespace's, never deleted for that.
 */
export function ciliumPlacements(view: EgressView, cidrs: string[], context: string): Placement[] {
  return view.ciliumPolicies.flatMap((p) => {
    const inside = new Set(addressesWithin(p.gateways.map((g) => g.ip).filter(Boolean), cidrs));
    const recorded = isManaged(p.labels)
      ? readOwners({ metadata: { annotations: p.annotations } }, [...inside])
      : {};
    return p.gateways.flatMap((g, i) => {
      if (!inside.has(g.ip)) return [];
      const path = `/spec/egressGateways/${i}`;
      const resource = "ciliumegressgatewaypolicy.cilium.io";
      const removeCommand =
        p.gateways.length === 1
          ? shellCommand("kubectl", "--context", context, "delete", resource, p.name)
          : shellCommand(
              "kubectl",
              "--context",
              context,
              "patch",
              resource,
              p.name,
              "--type=json",
              "-p",
              JSON.stringify([
                { op: "test", path: `${path}/egressIP`, value: g.ip },
                { op: "remove", path },
              ]),
            );
      const owners = recorded[g.ip];
      return [
        {
          ip: g.ip,
          host: g.node ?? "(no single node)",
          removeCommand,
          repinnedInPlace: true,
          ...(owners ? { owners } : {}),
        },
      ];
    });
  });
}
