import { formatAddress, parseAddress, type AddressFamily } from "../../allocator/address";
import { formatPrefix, parsePrefix } from "../../allocator/prefix";
import type { Eni } from "./ec2";

/**
 * What an interface's delegated prefixes use inside `cidrs`, in the form `usedAddresses` answers: each
 * address of an IPv4 prefix (the VPC CNI hands each /28 to pods; no `PrivateIpAddresses` entry lists
 * them), and an IPv6 prefix (a /80 in IPv6 prefix mode: 2^48 addresses, too many to list) as one
 * CIDR block, the part of it inside the CIDR (of two prefixes, one contains the other).
 */
export function prefixUseWithin(eni: Eni, cidrs: string[]): string[] {
  const out: string[] = [];
  for (const text of eni.prefixes ?? []) {
    const prefix = parsePrefix(text, "delegated prefix");
    for (const cidr of cidrs) {
      const c = parsePrefix(cidr);
      if (c.family !== prefix.family || c.network > prefix.last || prefix.network > c.last) continue;
      if (prefix.family === 6) {
        const inner = c.prefixLength > prefix.prefixLength ? c : prefix;
        out.push(formatPrefix(6, inner.network, inner.prefixLength));
        continue;
      }
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
    const p = parsePrefix(text, "delegated prefix");
    return p.family === a.family && a.value >= p.network && a.value <= p.last;
  });
}

/** How many prefixes of `family` are delegated to `eni`: each takes one of its address slots. */
export function prefixCount(eni: Eni, family: AddressFamily): number {
  return (eni.prefixes ?? []).filter((p) => parsePrefix(p, "delegated prefix").family === family).length;
}
