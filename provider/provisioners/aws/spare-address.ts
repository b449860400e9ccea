import { formatAddress, parseAddress } from "../../allocator/address";
import { parsePrefix } from "../../allocator/prefix";
import type { Eni } from "./ec2";
import { prefixHolding } from "./prefixes";

/**
 * An address of the subnet that no interface uses (no private IP, no delegated prefix) and AWS
 * does not reserve (the first four and the last), the first after `ip` (wrapping around): what an
 * error about a taken address suggests giving the holder instead, so the advice can be followed
 * as written. The pool may still refuse it (outside its ranges, or another holder's): at preview.
 */
export function spareAddress(cidr: string, enis: Eni[], ip: string): string | undefined {
  const subnet = parsePrefix(cidr);
  const used = new Set(
    enis
      .flatMap((n) => n.addresses.map((a) => parseAddress(a.ip)))
      .flatMap((a) => (a.family === subnet.family ? [a.value] : [])),
  );
  const first = subnet.network + 4n;
  const last = subnet.last - 1n;
  const size = last - first + 1n;
  const start = parseAddress(ip).value;
  for (let i = 1n; i <= size && i <= 4096n; i++) {
    const v = first + ((((start - first + i) % size) + size) % size);
    const text = formatAddress(subnet.family, v);
    if (!used.has(v) && !enis.some((n) => prefixHolding(n, text))) return text;
  }
  return undefined;
}

/**
 * What to do about a planned address somebody else took: excluding it from the pool alone is
 * refused while the allocation holds it, so the advice moves the allocation to a spare address first.
 */
export function spareAdvice(ip: string, spare: string | undefined): string {
  const instead = spare ? `ips: ["${spare}"]` : "ips: [<an address of its pool that nothing uses>]";
  return (
    `exclude it from the pool once no allocation holds it: first give the EgressIp ${instead} (for an ` +
    `EgressIpAssignment of your own, that address as its IpAllocation's ip) and run pulumi up, so that its ` +
    `allocation moves to an address nobody uses; or free ${ip} there`
  );
}
