// The walks over a pool's free space that carving blocks takes (holes between held and blocked
// intervals, their CIDR decomposition, alignment) and how messages show a span. The space itself is
// the pool's PoolLayout, the one that single addresses come from. Internal.
import { type AddressFamily, familyBits, formatAddress } from "./address";
import { firstAbsentIn, type ReadonlyIntervalSet } from "./interval-set";
import { formatPrefix } from "./prefix";

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
