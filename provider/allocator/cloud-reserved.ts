import { formatAddress } from "./address";
import { IpamError } from "../core/ipam-error";
import { canonicalCidr, parsePrefix } from "./prefix";
import { shown } from "../core/text";

/** Clouds with a known reserved-address policy. */
export type CloudProvider = "aws";

/**
 * The addresses a cloud keeps for itself in every subnet, in ascending order, ready to pass as
 * exclusions (`exclude: cloudReservedAddresses("10.0.8.0/24", "aws")`).
 *
 * AWS (VPC user guide, "Subnet CIDR blocks"): the first four addresses and the last address of every
 * subnet CIDR block cannot be assigned — the network address, network+1 (the VPC router), network+2
 * (the Amazon DNS server) and network+3 (reserved for future use), and the last address (the IPv4
 * broadcast address; AWS does not support broadcast). The same first four and last address are
 * reserved in IPv6 subnet CIDR blocks too, so both families get five addresses. The network address is
 * included even though ranges never start there by default, because a range may be written to.
 *
 * @param subnet - the subnet CIDR; must be a network address.
 * @throws IpamError INVALID_ADDRESS / HOST_BITS_SET for a bad subnet; INVALID_CONFIG for an unknown
 *   provider.
 */
export function cloudReservedAddresses(subnet: string, provider: CloudProvider): string[] {
  if (provider !== "aws") {
    throw new IpamError("INVALID_CONFIG", `no reserved-address policy for cloud ${shown(provider)}`);
  }
  canonicalCidr(subnet);
  const { family, network, last } = parsePrefix(subnet, "subnet");
  const values = new Set<bigint>();
  for (let i = 0n; i <= 3n && network + i <= last; i++) values.add(network + i);
  values.add(last);
  return [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((v) => formatAddress(family, v));
}
