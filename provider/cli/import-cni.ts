import {
  antreaAddresses,
  servesNamespace as egressServes,
} from "../provisioners/kubernetes/antrea/antrea-namespaces";
import {
  ciliumAddresses,
  servesNamespace as policyServes,
} from "../provisioners/kubernetes/cilium/cilium-namespaces";
import type { NamespaceFacts, SeenAddress } from "../provisioners/kubernetes/namespace-addresses";
import type { ClusterFacts } from "./import-facts";

// What `import` makes of a namespace whose addresses are a CiliumEgressGatewayPolicy's gateways or
// Antrea Egresses: the provisioner settings under which `adopt: true` takes them over as they are
// (the policy's destinations, the Egresses' externalIPPool), or the problem that keeps them out.

/** The kinds an address the cluster gives a namespace can come from. */
export type SourceKind = "openshift" | "cilium" | "antrea";

/** Which kind of object an address was seen in, by its source (`CiliumEgressGatewayPolicy x`, `Egress x`, …). */
export function sourceKind(source: string): SourceKind {
  if (source.startsWith("CiliumEgressGatewayPolicy ")) return "cilium";
  if (source.startsWith("Egress ")) return "antrea";
  return "openshift";
}

/** The addresses Cilium policies and Antrea Egresses give `ns`, each with the Node carrying it. */
export function cniAddresses(facts: ClusterFacts, ns: NamespaceFacts): SeenAddress[] {
  return [
    ...ciliumAddresses(facts.ciliumPolicies, ns, facts.nodes),
    ...antreaAddresses(facts.antreaEgresses, ns),
  ];
}

/** The provisioner settings of a cilium or antrea namespace, as the program writes them. */
export type CniSettings =
  | { kind: "cilium"; destinations: string[]; excluded?: string[] }
  | { kind: "antrea"; externalIPPool?: string };

/**
 * The settings that adopt `seen` (the namespace's addresses, all of `kind`) as they are, or the
 * problem line that keeps the namespace out: its gateways in more than one policy, a gateway
 * without egressIP, a policy without destinations; Egresses of different externalIPPools, or one
 * listing several addresses (egressIPs). What `adopt` would refuse, `import` reports instead.
 */
export function cniSettings(
  facts: ClusterFacts,
  ns: NamespaceFacts,
  kind: "cilium" | "antrea",
  seen: SeenAddress[],
): { settings: CniSettings } | { problem: string } {
  const where = `namespace ${ns.name}`;
  const ips = new Set(seen.map((a) => a.ip));
  if (kind === "cilium") {
    const policies = facts.ciliumPolicies.filter(
      (p) => policyServes(p, ns) && p.gateways.some((g) => ips.has(g.ip)),
    );
    const names = policies.map((p) => p.name).join(", ");
    const p = policies[0]!;
    const problem =
      policies.length > 1
        ? `its gateways are in CiliumEgressGatewayPolicies ${names}; a namespace's gateways are one policy's: merge them into one and import again`
        : p.gateways.some((g) => !g.ip)
          ? `CiliumEgressGatewayPolicy ${p.name} has a gateway without egressIP (an interface's address); give each gateway its egressIP and import again`
          : p.destinations.length === 0
            ? `CiliumEgressGatewayPolicy ${p.name} has no destinationCIDRs`
            : undefined;
    if (problem) return { problem: `${where}: ${problem}` };
    return {
      settings: {
        kind,
        destinations: p.destinations,
        ...(p.excluded.length > 0 ? { excluded: p.excluded } : {}),
      },
    };
  }
  const egresses = facts.antreaEgresses.filter((e) => egressServes(e, ns) && e.ips.some((ip) => ips.has(ip)));
  const listed = egresses.find((e) => e.listed);
  if (listed) {
    return {
      problem:
        `${where}: Egress ${listed.name} lists egressIPs ${listed.ips.join(", ")}; an EgressIp adopts an Egress ` +
        `with one egressIP: give it egressIP and import again`,
    };
  }
  const pools = [...new Set(egresses.map((e) => e.externalIPPool ?? "(none)"))];
  if (pools.length > 1) {
    return {
      problem:
        `${where}: its Egresses use externalIPPools ${pools.join(", ")}; one EgressIp has one externalIPPool: ` +
        `give them one and import again`,
    };
  }
  const pool = egresses[0]?.externalIPPool;
  return { settings: { kind, ...(pool === undefined ? {} : { externalIPPool: pool }) } };
}
