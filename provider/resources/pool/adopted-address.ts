import { IpamError } from "../../core/ipam-error";
import { addressFamily } from "../../allocator/address";
import type { NamespaceAddress } from "../../provisioners/egress-ip-provisioner";
import type { ProvisionerConfig } from "../../provisioners/config/provisioner-config";
import { callSignal, provisionerFor } from "../../provisioners/factory/provisioner-cache";
import type { ResolvedPool } from "./pool-spec";

/** Where an allocation adopts its address from (set by an EgressIp with `adopt: true`). */
export interface AdoptFrom {
  /** The namespace whose present addresses are taken over. */
  namespace: string;
  /** The allocation's failure domain (none or "" for an EgressIp pinned to a host). */
  failureDomain?: string;
  /** Every failure domain of the EgressIp. */
  domains?: string[];
  /** This pool is the EgressIp's only pool: every address of the namespace must be in it. */
  onlyPool?: boolean;
  /**
   * The families the EgressIp places (`families`; absent: the pool's one family). An allocation of
   * one family takes the namespace's address of its family; one of another family listed here is
   * its sibling allocation's, one of a family not listed is refused.
   */
  families?: ("ipv4" | "ipv6")[];
}

/** An address as messages show it: `10.0.0.5 (NetNamespace team-a, on node n1)`. */
export const describeAddress = (a: NamespaceAddress): string =>
  `${a.ip} (${a.source}${a.node ? `, on node ${a.node}` : ""}${a.failureDomain ? ` in domain ${a.failureDomain}` : ""})`;

/**
 * The address the cluster gives `from.namespace` that this allocation takes over: the one in
 * `pool` of its failure domain (by the Node carrying it; an address on no Node by the pool alone)
 * and, for an allocation of one `family`, of that family; or undefined when the namespace has none
 * there (a new one is planned). Read through the `observeWith` provisioner.
 * @throws IpamError INVALID_INPUT naming the addresses, their source and the pool when the namespace's addresses do
 * not fit the EgressIp: one outside the pool or in a domain it does not list, two for one domain
 * and family, one of a family the EgressIp does not place, or a provisioner that cannot tell (aws, none).
 */
export async function adoptedAddress(
  pool: ResolvedPool,
  poolName: string,
  observeWith: ProvisionerConfig,
  from: AdoptFrom,
  family?: "ipv4" | "ipv6",
): Promise<NamespaceAddress | undefined> {
  const provisioner = provisionerFor(observeWith);
  if (!provisioner.namespaceAddresses) {
    throw new IpamError(
      "INVALID_INPUT",
      `adopt reads the addresses namespace ${from.namespace} has from the cluster, and the ${observeWith.kind} ` +
        `provisioner has no cluster to read: give the addresses to take over in ips`,
    );
  }
  const all = await provisioner.namespaceAddresses(from.namespace, callSignal());
  const domain = from.failureDomain ?? "";
  const inPool = (a: NamespaceAddress) => pool.rangeSets.some((s) => s.contains(a.ip));
  const problems: string[] = [];
  const mine: NamespaceAddress[] = [];
  const placed = from.families ?? (family ? [family] : undefined);
  const familyOf = (a: NamespaceAddress) => (addressFamily(a.ip) === 6 ? "ipv6" : "ipv4");
  for (const a of all) {
    if (family && familyOf(a) !== family) {
      // The other family's allocation of the EgressIp takes it.
      if (placed?.includes(familyOf(a))) continue;
      problems.push(
        `${describeAddress(a)} is an ${familyOf(a) === "ipv6" ? "IPv6" : "IPv4"} address and the EgressIp ` +
          `places ${family === "ipv6" ? "IPv6" : "IPv4"} only: set families: "dual" to take it over too`,
      );
      continue;
    }
    const d = a.failureDomain;
    if (domain !== "" && d !== undefined && from.domains && !from.domains.includes(d)) {
      problems.push(`${describeAddress(a)} is in a failure domain the EgressIp does not list`);
      continue;
    }
    const ours = domain === "" || (d === undefined ? inPool(a) || Boolean(from.onlyPool) : d === domain);
    if (!ours) continue;
    if (inPool(a)) mine.push(a);
    else problems.push(`${describeAddress(a)} is outside pool ${poolName}`);
  }
  if (mine.length > 1) {
    problems.push(
      `${mine.map(describeAddress).join(", ")} are all for failure domain ${domain ? `"${domain}"` : "(pinned host)"} ` +
        `and an EgressIp has one address per domain: give ips to choose, or take the others off`,
    );
  }
  if (problems.length > 0) {
    throw new IpamError(
      "INVALID_INPUT",
      `cannot adopt the addresses of namespace ${from.namespace}: ${problems.join("; ")}. ` +
        `Nothing was changed; add the subnet or domain to the pool and the EgressIp, or leave adopt off`,
    );
  }
  return mine[0];
}
