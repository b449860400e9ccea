import { shellCommand } from "../../core/text";
import type { ObjectRef } from "../../kube/object-edit";
import type { Placement } from "../egress-ip-provisioner";
import { addressesWithin, api, hostnameLabel, type CiliumGateway, type EgressView } from "./egress-view";
import type { CiliumProvisionerConfig } from "./kube-provisioner-config";
import type { AddressLocations } from "./node-planner";
import { isManaged } from "./managed-by";
import { readOwners } from "./owners";
import { adoptedForAnnotation } from "./ovn";

// The CiliumEgressGatewayPolicy objects of the cilium kind: their names, the spec written for a
// namespace's gateways, and what planning and `check` read back from the cluster's policies.

/** The name of the CiliumEgressGatewayPolicy that holds a namespace's gateways. */
export const ciliumObjectName = (namespace: string): string => `egress-ipam-${namespace}`;
/** The Pod label Cilium gives every endpoint: its namespace. */
const podNamespaceLabel = "io.kubernetes.pod.namespace";

/** The policy object of that name. */
export const policyRef = (name: string): ObjectRef => ({
  apiVersion: api.cilium,
  kind: "CiliumEgressGatewayPolicy",
  name,
});
export { isManaged } from "./managed-by";
const namespaceOfPolicy = (name: string) =>
  name.startsWith("egress-ipam-") ? name.slice("egress-ipam-".length) : undefined;

/** Where the policies pin each address, and the namespace each of ours serves. */
export function ciliumLocations(view: EgressView): AddressLocations {
  const nodeOf = new Map<string, string>();
  const namespaceOf = new Map<string, string>();
  for (const p of view.ciliumPolicies) {
    // A policy taken over by adopt says which namespace it serves; ours are named after it.
    const ns = isManaged(p.labels)
      ? (p.annotations[adoptedForAnnotation] ?? namespaceOfPolicy(p.name))
      : undefined;
    for (const g of p.gateways) {
      if (!g.ip) continue;
      if (g.node) nodeOf.set(g.ip, g.node);
      if (ns) namespaceOf.set(g.ip, ns);
    }
  }
  return { nodeOf, namespaceOf };
}

/** The spec of a namespace's policy with these gateways (in order). */
export function policySpec(namespace: string, gateways: CiliumGateway[], config: CiliumProvisionerConfig) {
  const entries = gateways.map((g) => ({
    nodeSelector: { matchLabels: { [hostnameLabel]: g.node } },
    egressIP: g.ip,
  }));
  return {
    selectors: [{ podSelector: { matchLabels: { [podNamespaceLabel]: namespace } } }],
    destinationCIDRs: config.destinations ?? ["0.0.0.0/0"],
    excludedCIDRs: config.excluded && config.excluded.length > 0 ? config.excluded : null,
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
