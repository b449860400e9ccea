import { type AddressFamily, familyBits, familyName, formatAddress } from "./address";
import { alignUp, cidrBlocks, formatSpan, holes } from "./block-space";
import { parseAddressBlock } from "./exclusions";
import { IpamError } from "../core/ipam-error";
import { IntervalSet, type ReadonlyIntervalSet } from "./interval-set";
import {
  type AllocationStrategy,
  checkStrategy,
  PoolLayout,
  type Segment,
  type TakenAddresses,
  takenIntervals,
} from "./pool-layout";
import { formatPrefix, hostBitsError, parsePrefix } from "./prefix";
import { resolveRange } from "./range";
import type { RangeSet } from "./range-set";
import { shown } from "../core/text";

/** Input of {@link nextFreeBlock}. */
export interface NextFreeBlockOptions {
  /**
   * The pool; canonicalized in place if it is not yet. Blocks come from between its ranges'
   * rangeStart and rangeEnd.
   */
  rangeSet: RangeSet;
  /** The block's prefix length, e.g. 24; an integer from 0 to 32 (IPv4) or 128 (IPv6). */
  prefixLength: number;
  /** CIDRs or single addresses no block may contain; entries of the other family are ignored. */
  exclude?: Iterable<string>;
  /**
   * Held addresses and blocks (a block is held as its whole interval): strings (addresses or
   * CIDRs), an AddressSet or an IntervalSet.
   */
  taken?: TakenAddresses | Iterable<string>;
  /** Default `round-robin`. */
  strategy?: AllocationStrategy;
  /**
   * Round-robin: the last block handed out (a CIDR) or an address; the search starts just after its
   * last address and wraps. Ignored when of the other family or outside every range.
   */
  cursor?: string;
}

/**
 * The next free aligned block of a pool, without reserving anything: a pure function of the pool,
 * the exclusions, the taken addresses and blocks, and the cursor — the block counterpart of
 * {@link nextFree}.
 *
 * Blocks come from what the pool hands out as single addresses ({@link PoolLayout}, host-local's
 * rule): each range from its rangeStart to its rangeEnd, never its gateway. A block lies wholly
 * between one range's rangeStart and rangeEnd, is aligned (its network address has no host bits),
 * does not hold that range's gateway, contains no excluded address and overlaps nothing taken. So
 * a range `{subnet: "10.0.0.0/8"}` (rangeStart and gateway 10.0.0.1, rangeEnd 10.255.255.254 by
 * default) gives 10.1.0.0/16 as its first /16, never 10.0.0.0/16 or 10.255.0.0/16; a range from
 * 10.90.7.0 to 10.90.7.255 of 10.90.0.0/16 gives blocks of 10.90.7.0/24 only. A block larger than
 * every range is simply not found.
 *
 * - `round-robin` (default) is first fit after the cursor: the first free block whose network
 *   address is after the cursor's last address, walking the ranges in range-set order and wrapping
 *   to the first (blocks at or before the cursor in its own range come last); without a cursor, the
 *   first fit from the start. A released block is not handed out again at once.
 * - `lowest-free` is best fit, to keep large blocks whole: the free space is cut into its maximal
 *   aligned free blocks (the CIDR decomposition of each free hole); the smallest of those that can
 *   hold the requested length wins (on a tie, the lowest address) and its lowest sub-block of that
 *   length is returned. With 10.0.0.0/26 of 10.0.0.0/24 taken, a /26 is 10.0.0.64/26, which leaves
 *   10.0.0.128/25 whole.
 *
 * Never enumerates addresses or candidate blocks: each step jumps over a whole taken or excluded
 * interval and aligns up. First fit costs O(log n) per hole crossed; best fit walks every free hole
 * of the pool, O(h · bits) for h holes (it stops early at the lowest exact fit).
 *
 * @returns the block as canonical CIDR text, e.g. `10.20.3.0/24` or `2001:db8:0:5::/64`.
 * @throws IpamError POOL_EXHAUSTED naming the length and the set by its ranges when no block fits
 *   (`no free /24 block left in range set 10.0.0.1-10.255.255.254`); INVALID_CONFIG
 *   for a prefix length that is not an integer from 0 to the family's bits, or an unknown strategy;
 *   INVALID_ADDRESS / HOST_BITS_SET for a bad cursor, exclusion or taken entry; any range-set
 *   canonicalize error.
 */
export function nextFreeBlock(options: NextFreeBlockOptions): string {
  const strategy = checkStrategy(options.strategy);
  const layout = PoolLayout.forRangeSet(options.rangeSet, options.exclude);
  const size = blockSize(layout.family, options.prefixLength);
  let cursor: bigint | undefined;
  if (options.cursor !== undefined) {
    const c = parseAddressBlock(options.cursor, "cursor");
    if (c.family === layout.family) cursor = c.last;
  }
  const taken = takenBlocks(options.taken, layout.family);
  const found =
    strategy === "lowest-free" ? bestFit(layout, size, taken) : firstFit(layout, size, taken, cursor);
  if (found === undefined) {
    throw new IpamError("POOL_EXHAUSTED", `no free /${options.prefixLength} block left in ${layout.label}`);
  }
  return formatPrefix(layout.family, found, options.prefixLength);
}

/**
 * Validates a requested block against the same rules as {@link nextFreeBlock} (any prefix length the
 * family allows; no strategy, no cursor).
 *
 * @returns the block as canonical CIDR text.
 * @throws IpamError INVALID_ADDRESS when `cidr` is not a CIDR; HOST_BITS_SET naming the network
 *   address to use; NOT_IN_RANGE naming the block and the set when it is of the other family or not
 *   wholly between one range's rangeStart and rangeEnd; IP_UNAVAILABLE naming the block and what it
 *   holds when it contains its range's gateway or an excluded address or overlaps a taken address
 *   or block; any error of `exclude`, `taken` or the range set as in {@link nextFreeBlock}.
 */
export function checkBlock(options: {
  rangeSet: RangeSet;
  cidr: string;
  exclude?: Iterable<string>;
  taken?: TakenAddresses | Iterable<string>;
}): string {
  const layout = PoolLayout.forRangeSet(options.rangeSet, options.exclude);
  const p = parsePrefix(options.cidr, "block");
  if (p.address !== p.network) throw hostBitsError("block", options.cidr, p);
  const cidr = formatPrefix(p.family, p.network, p.prefixLength);
  if (p.family !== layout.family) {
    throw new IpamError(
      "NOT_IN_RANGE",
      `block ${cidr} is ${familyName(p.family)} but ${layout.label} is ${familyName(layout.family)}`,
    );
  }
  const at = layout.segmentOf(p.network);
  if (at < 0 || p.last > (layout.segments[at] as Segment).end) {
    throw new IpamError(
      "NOT_IN_RANGE",
      `block ${cidr} is not inside one range of ${layout.label}: a block is carved from between a ` +
        "range's rangeStart and rangeEnd; ask for a block inside one, or widen the range",
    );
  }
  const range = options.rangeSet.ranges[at]!;
  const { gateway } = resolveRange(range);
  if (gateway >= p.network && gateway <= p.last) {
    throw new IpamError(
      "IP_UNAVAILABLE",
      `block ${cidr} contains the gateway ${formatAddress(p.family, gateway)} of range ${range.toString()}: ` +
        "ask for a block without it",
    );
  }
  // The range's gateway is out of the block, so anything else blocked in it is excluded.
  const conflicts: [ReadonlyIntervalSet, string][] = [
    [layout.blocked, "excluded"],
    [takenBlocks(options.taken, layout.family), "taken"],
  ];
  for (const [set, what] of conflicts) {
    const hit = set.intervals(p.network, p.last).next();
    if (hit.done) continue;
    const [s, e] = hit.value;
    const why =
      s === p.network && e === p.last
        ? `is ${what}`
        : `${what === "taken" ? "overlaps" : "contains"} ${what} ${formatSpan(p.family, s, e)}`;
    throw new IpamError("IP_UNAVAILABLE", `block ${cidr} ${why} in ${layout.label}`);
  }
  return cidr;
}

/** The number of addresses in a block of `prefixLength`. @throws IpamError INVALID_CONFIG. */
function blockSize(family: AddressFamily, prefixLength: unknown): bigint {
  const bits = familyBits(family);
  if (
    typeof prefixLength !== "number" ||
    !Number.isInteger(prefixLength) ||
    prefixLength < 0 ||
    prefixLength > bits
  ) {
    throw new IpamError(
      "INVALID_CONFIG",
      `block prefix length ${shown(prefixLength)} is not an integer from 0 to ${bits} (${familyName(family)})`,
    );
  }
  return 1n << BigInt(bits - prefixLength);
}

/**
 * Taken entries as intervals of `family`: an AddressSet or IntervalSet as {@link takenIntervals}
 * reads it; strings may also be CIDRs, each held as its whole block.
 */
function takenBlocks(
  taken: TakenAddresses | Iterable<string> | undefined,
  family: AddressFamily,
): ReadonlyIntervalSet {
  const x = taken as { intervalsOf?: unknown; nextAbsent?: unknown } | undefined;
  if (x === undefined || typeof x.intervalsOf === "function" || typeof x.nextAbsent === "function") {
    return takenIntervals(taken, family);
  }
  const set = new IntervalSet();
  for (const text of taken as Iterable<string>) {
    const b = parseAddressBlock(text, "taken entry");
    if (b.family === family) set.add(b.first, b.last);
  }
  return set;
}

/** First fit: see {@link nextFreeBlock}'s `round-robin`. */
function firstFit(
  layout: PoolLayout,
  size: bigint,
  taken: ReadonlyIntervalSet,
  cursor?: bigint,
): bigint | undefined {
  const { segments } = layout;
  const n = segments.length;
  const at = cursor === undefined ? -1 : layout.segmentOf(cursor);
  // From a cursor in range `at`: the rest of `at`, the following ranges wrapping around, then the
  // blocks of `at` whose network address is not after the cursor. Otherwise: every range in order.
  for (let k = 0; k < (at < 0 ? n : n + 1); k++) {
    const s = segments[at < 0 ? k : (at + k) % n] as Segment;
    if (size > s.end - s.start + 1n) continue;
    const from = at >= 0 && k === 0 ? (cursor as bigint) + 1n : s.start;
    const limit = at >= 0 && k === n ? (cursor as bigint) : s.end;
    for (const [holeStart, holeEnd] of holes(from, s.end, layout.blocked, taken)) {
      const c = alignUp(holeStart, size);
      if (c > limit) break;
      if (c + size - 1n <= holeEnd) return c;
    }
  }
  return undefined;
}

/** Best fit: see {@link nextFreeBlock}'s `lowest-free`. */
function bestFit(layout: PoolLayout, size: bigint, taken: ReadonlyIntervalSet): bigint | undefined {
  let best: { start: bigint; size: bigint } | undefined;
  // Ascending address order, so the first exact fit is the answer and ties keep the lowest.
  const segments = [...layout.segments].sort((a, b) => (a.start < b.start ? -1 : 1));
  for (const s of segments) {
    if (size > s.end - s.start + 1n) continue;
    for (const [holeStart, holeEnd] of holes(s.start, s.end, layout.blocked, taken)) {
      for (const block of cidrBlocks(holeStart, holeEnd)) {
        if (block.size < size || (best !== undefined && block.size >= best.size)) continue;
        if (block.size === size) return block.start;
        best = block;
      }
    }
  }
  return best?.start;
}
