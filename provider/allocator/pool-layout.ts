import { type AddressFamily, parseAddress } from "./address";
import type { ReadonlyAddressSet } from "./address-set";
import { exclusionSet } from "./exclusions";
import { IpamError } from "../core/ipam-error";
import { countUnionIn, firstAbsentIn, IntervalSet, type ReadonlyIntervalSet } from "./interval-set";
import type { RangeSet } from "./range-set";
import { resolveRange } from "./range";
import { shown } from "../core/text";

/**
 * How the next address is chosen.
 * - `round-robin` (host-local, the default): start just after the last reserved address, walk to the
 *   end of its range, on through the following ranges, wrap to the first, and try the last reserved
 *   address itself last. A crash-looping workload does not get the same address back at once.
 * - `lowest-free` (whereabouts, webmesh, the egress operators): the first free address, taking the
 *   ranges in the order of the set and each range from its start.
 */
export type AllocationStrategy = "round-robin" | "lowest-free";

/** Anything that can describe taken addresses: address strings, an AddressSet, or raw intervals. */
export type TakenAddresses = Iterable<string> | ReadonlyAddressSet | ReadonlyIntervalSet;

/** One contiguous allocatable block. */
export interface Segment {
  readonly start: bigint;
  readonly end: bigint;
}

/** Where {@link PoolLayout.find} landed: the segment index and the address value. */
export interface Found {
  readonly segment: number;
  readonly value: bigint;
}

/**
 * The compiled form of a pool that every search shares: its family, its ordered allocatable
 * segments, and the addresses never handed out (gateways and exclusions). IpAllocator, NodeAllocator,
 * nextFree, poolCapacity and freeCount are all thin wrappers over this one mechanism, and blocks
 * (nextFreeBlock, checkBlock) are carved from the same segments, never over what it blocks. Internal.
 */
export class PoolLayout {
  constructor(
    readonly family: AddressFamily,
    readonly segments: readonly Segment[],
    readonly blocked: ReadonlyIntervalSet,
    /** How messages name the pool, e.g. "range set 10.0.0.1-10.0.0.6". */
    readonly label: string,
  ) {}

  /**
   * Compiles a range set (canonicalizing it in place first) with its exclusions; each range's
   * gateway is blocked when the range holds it, exactly where host-local's iterator skips it.
   * @throws IpamError any canonicalize error, or a parse error of an exclusion.
   */
  static forRangeSet(rangeSet: RangeSet, exclude: Iterable<string> = []): PoolLayout {
    rangeSet.canonicalize();
    const resolved = rangeSet.ranges.map(resolveRange);
    const family = resolved[0]?.family ?? 4;
    const blocked = exclusionSet(family, exclude);
    for (const r of resolved) if (r.gateway >= r.start && r.gateway <= r.end) blocked.add(r.gateway);
    const segments = resolved.map((r) => ({ start: r.start, end: r.end }));
    return new PoolLayout(family, segments, blocked, `range set ${rangeSet.toString()}`);
  }

  /** Index of the segment holding `value`, or -1. */
  segmentOf(value: bigint): number {
    const segments = this.segments;
    for (let i = 0; i < segments.length; i++) {
      const s = segments[i] as Segment;
      if (value >= s.start && value <= s.end) return i;
    }
    return -1;
  }

  /**
   * The next address that is in a segment, not blocked and in neither `taken` nor `lost`, or
   * undefined. With `round-robin` and a cursor inside the pool, the search starts after the cursor
   * and the cursor itself comes last; otherwise it starts at the first segment's start.
   */
  find(
    taken: ReadonlyIntervalSet,
    cursor: bigint | undefined,
    strategy: AllocationStrategy,
    lost?: ReadonlyIntervalSet,
  ): Found | undefined {
    const segments = this.segments;
    const n = segments.length;
    const at = strategy === "round-robin" && cursor !== undefined ? this.segmentOf(cursor) : -1;
    // Round-robin from a cursor in segment `at`: the rest of `at`, the following segments wrapping
    // around, then the start of `at` up to and including the cursor. Otherwise: every segment in order.
    for (let k = 0; k <= n; k++) {
      const i = at < 0 ? k : (at + k) % n;
      const s = segments[i];
      if (s === undefined || (at < 0 && k === n)) break;
      let from = s.start;
      let to = s.end;
      if (at >= 0 && cursor !== undefined) {
        if (k === 0) from = cursor + 1n;
        else if (k === n) to = cursor;
      }
      const value = firstAbsentIn(from, to, this.blocked, taken, lost);
      if (value !== undefined) return { segment: i, value };
    }
    return undefined;
  }

  /** Number of addresses that can ever be handed out: segment sizes minus blocked addresses. */
  capacity(): bigint {
    let total = 0n;
    for (const s of this.segments) total += s.end - s.start + 1n - this.blocked.countIn(s.start, s.end);
    return total;
  }

  /** Number of allocatable addresses not in `taken`. */
  freeCount(taken: ReadonlyIntervalSet): bigint {
    let total = 0n;
    for (const s of this.segments) {
      total += s.end - s.start + 1n - countUnionIn(this.blocked, taken, s.start, s.end);
    }
    return total;
  }

  /** The POOL_EXHAUSTED error for this pool. */
  exhausted(): IpamError {
    return new IpamError("POOL_EXHAUSTED", `no free address left in ${this.label}`);
  }
}

/** The strategy named by `value`, checked. @throws IpamError INVALID_CONFIG for anything else. */
export function checkStrategy(value: unknown): AllocationStrategy {
  if (value === undefined) return "round-robin";
  if (value === "round-robin" || value === "lowest-free") return value;
  throw new IpamError(
    "INVALID_CONFIG",
    `unknown allocation strategy ${shown(value)} (expected "round-robin" or "lowest-free")`,
  );
}

/**
 * The taken addresses of one family as intervals. An AddressSet or IntervalSet is used as is (an
 * IntervalSet is read as values of `family`); strings are parsed, and those of the other family are
 * ignored.
 * @throws IpamError INVALID_ADDRESS for a string that is not an address.
 */
export function takenIntervals(
  taken: TakenAddresses | undefined,
  family: AddressFamily,
): ReadonlyIntervalSet {
  if (taken === undefined) return new IntervalSet();
  if (isAddressSet(taken)) return taken.intervalsOf(family);
  if (isIntervalSet(taken)) return taken;
  const set = new IntervalSet();
  for (const ip of taken) {
    const a = parseAddress(ip, "taken address");
    if (a.family === family) set.add(a.value);
  }
  return set;
}

function isAddressSet(x: TakenAddresses): x is ReadonlyAddressSet {
  return typeof (x as Partial<ReadonlyAddressSet>).intervalsOf === "function";
}

function isIntervalSet(x: TakenAddresses): x is ReadonlyIntervalSet {
  return typeof (x as Partial<ReadonlyIntervalSet>).nextAbsent === "function";
}
