// What a ledger records as held is an entry: a single address (`10.0.8.10`) or an aligned block
// (`10.20.3.0/24`). Both are intervals of one family; a pool's taken set is their union, and two
// entries of different holders may never overlap. Everything here is pure.
import { type AddressFamily, type AddressSet, canonicalAddress, IpamError } from "../allocator";
import { formatAddress, parseAddress } from "../allocator/address";
import { formatPrefix, parsePrefix } from "../allocator/prefix";

/** The addresses an entry covers: one family, `[start, end]` inclusive. */
export interface EntrySpan {
  family: AddressFamily;
  start: bigint;
  end: bigint;
}

/** Whether an entry is a block (a CIDR) rather than a single address. */
export const isBlock = (entry: string): boolean => entry.includes("/");

/**
 * The span of an entry.
 * @throws IpamError INVALID_ADDRESS when it is neither an address nor a CIDR; HOST_BITS_SET for a
 *   CIDR that is not its own network address.
 */
export function entrySpan(entry: string): EntrySpan {
  if (!isBlock(entry)) {
    const { family, value } = parseAddress(entry, "held address");
    return { family, start: value, end: value };
  }
  const p = parsePrefix(entry, "held block");
  if (p.address !== p.network) {
    throw new IpamError(
      "HOST_BITS_SET",
      `held block ${entry} is not a network address (${formatPrefix(p.family, p.network, p.prefixLength)})`,
    );
  }
  return { family: p.family, start: p.network, end: p.last };
}

/** The canonical text of an entry (`2001:DB8::/64` → `2001:db8::/64`). @throws as {@link entrySpan}. */
export function canonicalEntry(entry: string): string {
  if (!isBlock(entry)) return canonicalAddress(entry);
  const p = parsePrefix(entry, "block");
  return formatPrefix(p.family, p.network, p.prefixLength);
}

/** Whether two entries share an address. */
export function entriesOverlap(a: EntrySpan, b: EntrySpan): boolean {
  return a.family === b.family && a.start <= b.end && b.start <= a.end;
}

/** Adds an entry's addresses to `taken`. */
export function takeEntry(taken: AddressSet, entry: string): void {
  const s = entrySpan(entry);
  taken.addRange(s.family, s.start, s.end);
}

/** Removes an entry's addresses from `taken`. */
export function freeEntry(taken: AddressSet, entry: string): void {
  const s = entrySpan(entry);
  taken.deleteRange(s.family, s.start, s.end);
}

/** Whether any address of an entry is in `taken`. */
export function anyTaken(taken: AddressSet, entry: string): boolean {
  const s = entrySpan(entry);
  return taken.intervalsOf(s.family).countIn(s.start, s.end) > 0n;
}

/** The address a round-robin search continues after: an address itself, a block's last address. */
export function cursorOf(entry: string): string {
  if (!isBlock(entry)) return entry;
  const s = entrySpan(entry);
  return formatAddress(s.family, s.end);
}

/** How a held entry is named in messages: `block 10.20.3.0/24` or `address 10.0.8.10`. */
export const describeEntry = (entry: string): string => `${isBlock(entry) ? "block" : "address"} ${entry}`;
