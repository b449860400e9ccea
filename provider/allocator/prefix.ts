import { type AddressFamily, familyBits, familyMax, formatAddress, tryParseAddress } from "./address";
import { IpamError } from "../core/ipam-error";
import { shown } from "../core/text";

/** A parsed CIDR: the address as written, its prefix length, and the block it denotes. */
export interface ParsedPrefix {
  readonly family: AddressFamily;
  /** The address part exactly as written (host bits may be set). */
  readonly address: bigint;
  readonly prefixLength: number;
  /** The network (first) address of the block. */
  readonly network: bigint;
  /** The last address of the block (the broadcast address for IPv4). */
  readonly last: bigint;
}

/**
 * Parses `addr/len`. Host bits are allowed here (callers decide whether that is an error). An
 * IPv4-mapped IPv6 CIDR with a length of 96 or more is the IPv4 CIDR it maps
 * (`::ffff:10.0.0.0/120` is `10.0.0.0/24`), consistent with how single mapped addresses are read.
 *
 * @param what - how to call the value in the error message, e.g. "subnet".
 * @throws IpamError INVALID_ADDRESS when the text is not a CIDR.
 */
export function parsePrefix(text: string, what = "CIDR"): ParsedPrefix {
  const bad = (why: string): IpamError =>
    new IpamError("INVALID_ADDRESS", `${what} ${shown(text)} is not a valid CIDR: ${why}`);
  if (typeof text !== "string") throw bad("expected a string like 10.0.0.0/24");
  const slash = text.indexOf("/");
  if (slash < 0) throw bad("missing the /prefix-length");
  const lengthText = text.slice(slash + 1);
  if (!/^(0|[1-9][0-9]{0,2})$/.test(lengthText)) throw bad("the prefix length is not a number");
  let prefixLength = Number(lengthText);
  const addressText = text.slice(0, slash);
  const parsed = tryParseAddress(addressText);
  if (parsed === undefined) throw bad(`${shown(addressText)} is not an IPv4 or IPv6 address`);
  const { family, value } = parsed;
  if (family === 4 && addressText.indexOf(":") >= 0) {
    if (prefixLength < 96) throw bad("an IPv4-mapped address needs a prefix length of at least 96");
    prefixLength -= 96;
  }
  if (prefixLength > familyBits(family)) {
    throw bad(`the prefix length exceeds ${familyBits(family)}`);
  }
  const host = hostMask(family, prefixLength);
  const network = value & (familyMax(family) ^ host);
  return { family, address: value, prefixLength, network, last: network | host };
}

/** All-ones in the host part of a `prefixLength` prefix of `family`. */
export function hostMask(family: AddressFamily, prefixLength: number): bigint {
  return (1n << BigInt(familyBits(family) - prefixLength)) - 1n;
}

/** Formats a CIDR canonically, e.g. `2001:db8::/64`. */
export function formatPrefix(family: AddressFamily, network: bigint, prefixLength: number): string {
  return `${formatAddress(family, network)}/${prefixLength}`;
}

/**
 * The canonical text of a CIDR that must be a network address: `canonicalCidr("2001:DB8::/64")` is
 * `"2001:db8::/64"`.
 *
 * @throws IpamError INVALID_ADDRESS when the text is not a CIDR; HOST_BITS_SET (naming the network
 *   address) when bits beyond the prefix are set.
 */
export function canonicalCidr(text: string): string {
  const p = parsePrefix(text);
  if (p.address !== p.network) throw hostBitsError("CIDR", text, p);
  return formatPrefix(p.family, p.network, p.prefixLength);
}

/** The HOST_BITS_SET error for `text`, naming the network address it should have been. */
export function hostBitsError(what: string, text: string, p: ParsedPrefix): IpamError {
  return new IpamError(
    "HOST_BITS_SET",
    `${what} ${text} has host bits set: for a /${p.prefixLength} prefix the network address is ` +
      `${formatAddress(p.family, p.network)} (use ${formatPrefix(p.family, p.network, p.prefixLength)})`,
  );
}

/**
 * Whether the address `text` lies inside the CIDR `cidr` (same family, within its block).
 * @throws IpamError INVALID_ADDRESS when `cidr` is not a CIDR.
 */
export function prefixContains(cidr: string, text: string): boolean {
  const p = parsePrefix(cidr);
  const a = tryParseAddress(text);
  return a !== undefined && a.family === p.family && a.value >= p.network && a.value <= p.last;
}
