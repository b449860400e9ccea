import { type AddressFamily, parseAddress } from "./address";
import { IntervalSet } from "./interval-set";
import { hostBitsError, parsePrefix } from "./prefix";

/** One exclusion as parsed: an inclusive block of addresses of one family. */
export interface AddressBlock {
  readonly family: AddressFamily;
  readonly first: bigint;
  readonly last: bigint;
}

/**
 * Parses one exclusion: a CIDR (`10.0.0.16/28`, which must be a network address) or a single
 * address (`10.0.0.7`).
 *
 * @throws IpamError INVALID_ADDRESS naming the value when it is neither; HOST_BITS_SET for a CIDR with
 *   host bits set (naming the network address meant).
 */
export function parseAddressBlock(text: string, what = "exclusion"): AddressBlock {
  if (typeof text === "string" && text.indexOf("/") >= 0) {
    const p = parsePrefix(text, what);
    if (p.address !== p.network) throw hostBitsError(what, text, p);
    return { family: p.family, first: p.network, last: p.last };
  }
  const { family, value } = parseAddress(text, what);
  return { family, first: value, last: value };
}

/**
 * Exclusions compiled for one family. Entries of the other family are skipped, so one dual-stack list
 * can serve both; entries outside any range simply never matter.
 *
 * @throws IpamError as {@link parseAddressBlock} for any entry, whatever its family.
 */
export function exclusionSet(family: AddressFamily, exclude: Iterable<string> = []): IntervalSet {
  const set = new IntervalSet();
  for (const text of exclude) {
    const block = parseAddressBlock(text);
    if (block.family === family) set.add(block.first, block.last);
  }
  return set;
}
