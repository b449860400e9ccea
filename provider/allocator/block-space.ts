// A pool compiled for carving blocks: the subnets blocks come from, the exclusions, and the walks
// over free space (holes and their CIDR decomposition) that first fit and best fit share. Internal.
import { type AddressFamily, familyBits, formatAddress } from "./address";
import { exclusionSet } from "./exclusions";
import { firstAbsentIn, type ReadonlyIntervalSet } from "./interval-set";
import { formatPrefix, hostMask } from "./prefix";
import { resolveRange } from "./range";
import type { RangeSet } from "./range-set";

/** One subnet blocks are carved from: an aligned inclusive interval. */
export interface Subnet {
  readonly start: bigint;
  readonly end: bigint;
}

/** A pool compiled for block search: the outermost subnets in range-set order, and the exclusions. */
export interface BlockSpace {
  readonly family: AddressFamily;
  readonly subnets: readonly Subnet[];
  readonly blocked: ReadonlyIntervalSet;
}

/** Compiles a range set (canonicalizing it in place) and its exclusions for block search. */
export function blockSpace(rangeSet: RangeSet, exclude: Iterable<string> | undefined): BlockSpace {
  rangeSet.canonicalize();
  const all = rangeSet.ranges.map((r) => {
    const x = resolveRange(r);
    return { family: x.family, start: x.network, end: x.network | hostMask(x.family, x.prefixLength) };
  });
  const family = all[0]?.family ?? 4;
  // CIDRs nest or are disjoint: keep each subnet once (where it first appears) and none that lies
  // inside another range's subnet.
  const inside = (a: Subnet, b: Subnet): boolean => a.start >= b.start && a.end <= b.end;
  const subnets = all.filter(
    (a, i) => !all.some((b, j) => j !== i && inside(a, b) && (j < i || !inside(b, a))),
  );
  return { family, subnets, blocked: exclusionSet(family, exclude) };
}

/** How messages name the pool: "range set 10.0.0.0-10.0.255.255" (its subnets, not its ranges). */
export function labelOf({ family, subnets }: BlockSpace): string {
  return `range set ${subnets.map((s) => `${formatAddress(family, s.start)}-${formatAddress(family, s.end)}`).join(",")}`;
}

/**
 * The maximal intervals of `[from, to]` in neither `a` nor `b`, ascending. Each step is O(log n) and
 * jumps over a whole interval of one set.
 */
export function* holes(
  from: bigint,
  to: bigint,
  a: ReadonlyIntervalSet,
  b: ReadonlyIntervalSet,
): Generator<[bigint, bigint]> {
  let x = from;
  while (x <= to) {
    const start = firstAbsentIn(x, to, a, b);
    if (start === undefined) return;
    let end = to;
    for (const set of [a, b]) {
      const next = set.intervals(start, end).next();
      if (!next.done) end = next.value[0] - 1n;
    }
    yield [start, end];
    x = end + 1n;
  }
}

/** The CIDR decomposition of `[start, end]`: its maximal aligned blocks, ascending. */
export function* cidrBlocks(start: bigint, end: bigint): Generator<{ start: bigint; size: bigint }> {
  for (let s = start; s <= end;) {
    const room = end - s + 1n;
    // The largest power of two dividing s (all of the space for s = 0), shrunk until it fits.
    let size = s === 0n ? 1n << BigInt(room.toString(2).length - 1) : s & -s;
    while (size > room) size >>= 1n;
    yield { start: s, size };
    s += size;
  }
}

/** `value` rounded up to a multiple of `size` (a power of two). */
export function alignUp(value: bigint, size: bigint): bigint {
  const mask = size - 1n;
  return (value + mask) & ~mask;
}

/** `a`, `a/len` when the span is an aligned block, else `a-b`. */
export function formatSpan(family: AddressFamily, start: bigint, end: bigint): string {
  if (start === end) return formatAddress(family, start);
  const size = end - start + 1n;
  if ((size & (size - 1n)) === 0n && (start & (size - 1n)) === 0n) {
    return formatPrefix(family, start, familyBits(family) - (size.toString(2).length - 1));
  }
  return `${formatAddress(family, start)}-${formatAddress(family, end)}`;
}
