import { IpamError } from "../core/ipam-error";
import { shown } from "../core/text";

/** An address family: 4 for IPv4, 6 for IPv6. The two never mix in one range set. */
export type AddressFamily = 4 | 6;

/** An address as the allocator handles it inside: its family and its value as an unsigned bigint. */
export interface ParsedAddress {
  readonly family: AddressFamily;
  readonly value: bigint;
}

const V4_MAPPED_PREFIX = 0xffffn;
const U32 = 0xffffffffn;

/** Number of bits in an address of `family` (32 or 128). */
export function familyBits(family: AddressFamily): number {
  return family === 4 ? 32 : 128;
}

/** The largest address value of `family`. */
export function familyMax(family: AddressFamily): bigint {
  return family === 4 ? U32 : (1n << 128n) - 1n;
}

/** "IPv4" or "IPv6", for messages. */
export function familyName(family: AddressFamily): string {
  return family === 4 ? "IPv4" : "IPv6";
}

/**
 * Parses one address. IPv4 is a strict dotted quad (no leading zeros, as Go's net.ParseIP since 1.17).
 * IPv6 is any RFC 4291 text form, with an optional dotted-quad tail, without a zone. An IPv4-mapped
 * IPv6 address (`::ffff:a.b.c.d`, in any spelling) is the IPv4 address, as host-local treats it.
 *
 * @param what - how to call the value in the error message, e.g. "rangeStart".
 * @throws IpamError INVALID_ADDRESS naming the value when it is not an address.
 */
export function parseAddress(text: string, what = "address"): ParsedAddress {
  const parsed = typeof text === "string" ? tryParseAddress(text) : undefined;
  if (parsed === undefined) {
    throw new IpamError("INVALID_ADDRESS", `${what} ${shown(text)} is not an IPv4 or IPv6 address`);
  }
  return parsed;
}

/** Like {@link parseAddress} but returns `undefined` instead of throwing. */
export function tryParseAddress(text: string): ParsedAddress | undefined {
  if (text.indexOf(":") < 0) {
    const v4 = parseV4(text, 0, text.length);
    return v4 === undefined ? undefined : { family: 4, value: BigInt(v4) };
  }
  const v6 = parseV6(text);
  if (v6 === undefined) return undefined;
  if (v6 >> 32n === V4_MAPPED_PREFIX) return { family: 4, value: v6 & U32 };
  return { family: 6, value: v6 };
}

/** Formats an address canonically: dotted quad, or RFC 5952 IPv6 (lowercase, longest zero run compressed). */
export function formatAddress(family: AddressFamily, value: bigint): string {
  if (family === 4) {
    const n = Number(value);
    return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
  }
  const groups: number[] = [];
  for (let shift = 96n; shift >= 0n; shift -= 32n) {
    const word = Number((value >> shift) & U32);
    groups.push(word >>> 16, word & 0xffff);
  }
  // RFC 5952 §4.2: compress the longest run of two or more zero groups, the first one on a tie.
  let bestAt = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [bestAt, bestLen] = [i, j - i];
    i = j;
  }
  let out = "";
  for (let i = 0; i < 8; i++) {
    if (i === bestAt) {
      out += "::";
      i += bestLen - 1;
      continue;
    }
    if (i > 0 && i !== bestAt + bestLen) out += ":";
    out += (groups[i] ?? 0).toString(16);
  }
  return out;
}

/**
 * The canonical text of an address: `canonicalAddress("2001:DB8::0:1") === "2001:db8::1"`,
 * `canonicalAddress("::ffff:10.0.0.1") === "10.0.0.1"`.
 *
 * @throws IpamError INVALID_ADDRESS when `text` is not an address.
 */
export function canonicalAddress(text: string): string {
  const { family, value } = parseAddress(text);
  return formatAddress(family, value);
}

/** The family of an address string. @throws IpamError INVALID_ADDRESS when `text` is not an address. */
export function addressFamily(text: string): AddressFamily {
  return parseAddress(text).family;
}

/**
 * The family of a canonical address or block (`10.0.0.1`, `fd00::/64`), as programs name it: IPv6
 * exactly when it has a colon. It does not check `text`: it is for values already made canonical
 * (an IPv4-mapped address is IPv4 only then), and for blocks, which {@link addressFamily} does not
 * parse.
 */
export function familyOfText(text: string): "ipv4" | "ipv6" {
  return text.includes(":") ? "ipv6" : "ipv4";
}

/** Parses a strict dotted quad between `from` and `to`; returns its 32-bit value as a number. */
function parseV4(s: string, from: number, to: number): number | undefined {
  let result = 0;
  let octets = 0;
  let cur = 0;
  let digits = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (digits > 0 && cur === 0) return undefined;
      cur = cur * 10 + (c - 48);
      if (++digits > 3 || cur > 255) return undefined;
    } else if (c === 46) {
      if (digits === 0 || octets === 3) return undefined;
      result = result * 256 + cur;
      octets++;
      cur = 0;
      digits = 0;
    } else {
      return undefined;
    }
  }
  if (digits === 0 || octets !== 3) return undefined;
  return result * 256 + cur;
}

/**
 * Parses RFC 4291 IPv6 text in one pass: up to eight hex groups, at most one `::`, and an optional
 * dotted-quad tail standing for the last two groups.
 */
function parseV6(s: string): bigint | undefined {
  const len = s.length;
  const groups: number[] = [];
  let gapAt = -1;
  let i = 0;
  if (s.charCodeAt(0) === 58) {
    if (s.charCodeAt(1) !== 58) return undefined;
    gapAt = 0;
    i = 2;
  }
  while (i < len) {
    const from = i;
    let group = 0;
    for (let d = hexDigit(s.charCodeAt(i)); d >= 0; d = hexDigit(s.charCodeAt(++i))) group = group * 16 + d;
    if (s.charCodeAt(i) === 46) {
      const v4 = groups.length <= 6 ? parseV4(s, from, len) : undefined;
      if (v4 === undefined) return undefined;
      groups.push(Math.floor(v4 / 0x10000), v4 % 0x10000);
      break;
    }
    if (i === from || i - from > 4 || groups.length === 8) return undefined;
    groups.push(group);
    if (i === len) break;
    if (s.charCodeAt(i) !== 58) return undefined;
    i++;
    if (s.charCodeAt(i) === 58) {
      if (gapAt >= 0) return undefined;
      gapAt = groups.length;
      i++;
    } else if (i === len) {
      return undefined;
    }
  }
  const count = groups.length;
  if (gapAt < 0 ? count !== 8 : count > 7) return undefined;
  if (gapAt >= 0) groups.splice(gapAt, 0, ...new Array<number>(8 - count).fill(0));
  const word = (k: number): bigint => BigInt((groups[k] ?? 0) * 0x10000 + (groups[k + 1] ?? 0));
  return (word(0) << 96n) | (word(2) << 64n) | (word(4) << 32n) | word(6);
}

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}
