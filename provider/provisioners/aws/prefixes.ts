import { formatAddress, parseAddress } from "../../allocator/address";
import { parsePrefix } from "../../allocator/prefix";
import type { Eni } from "./ec2";

/**
 * The addresses inside an interface's delegated IPv4 prefixes (the VPC CNI's prefix delegation
 * hands each /28 to pods) that also lie inside one of `cidrs`: used, though no `PrivateIpAddresses`
 * entry lists them.
 */
export function prefixAddressesWithin(eni: Eni, cidrs: string[]): string[] {
  const out: string[] = [];
  for (const text of eni.prefixes ?? []) {
    const prefix = parsePrefix(text, "IPv4 prefix");
    for (const cidr of cidrs) {
      const c = parsePrefix(cidr);
      if (c.family !== prefix.family) continue;
      const from = c.network > prefix.network ? c.network : prefix.network;
      const to = c.last < prefix.last ? c.last : prefix.last;
      for (let v = from; v <= to; v++) out.push(formatAddress(prefix.family, v));
    }
  }
  return out;
}

/** The delegated prefix of `eni` that contains `ip`, if any. */
export function prefixHolding(eni: Eni, ip: string): string | undefined {
  const a = parseAddress(ip);
  return eni.prefixes?.find((text) => {
    const p = parsePrefix(text, "IPv4 prefix");
    return p.family === a.family && a.value >= p.network && a.value <= p.last;
  });
}
