import { familyName, formatAddress, parseAddress } from "./address";
import { IpamError } from "../core/ipam-error";
import { Range, type RangeInit, resolveRange } from "./range";

/**
 * An ordered list of ranges of one family that do not overlap: what one allocator hands addresses
 * out of (host-local's RangeSet; one per interface address in a CNI config). Order matters: the
 * allocator starts in the first range and wraps from the last range to the first.
 */
export class RangeSet implements Iterable<Range> {
  /** The ranges, in order. Plain objects given to the constructor are wrapped in {@link Range}. */
  readonly ranges: readonly Range[];

  /** @param ranges - the ranges; nothing is checked until {@link RangeSet.canonicalize} or use. */
  constructor(ranges: Iterable<Range | RangeInit>) {
    this.ranges = [...ranges].map((r) => (r instanceof Range ? r : new Range(r)));
  }

  /** Number of ranges. */
  get length(): number {
    return this.ranges.length;
  }

  [Symbol.iterator](): Iterator<Range> {
    return this.ranges[Symbol.iterator]();
  }

  /**
   * Canonicalizes every range, then checks the set as a whole. Idempotent.
   *
   * @throws IpamError EMPTY_RANGE_SET; any {@link Range.canonicalize} error; MIXED_FAMILIES (naming two
   *   ranges of different families); OVERLAPPING_RANGES (naming the two ranges).
   */
  canonicalize(): this {
    if (this.ranges.length === 0) throw new IpamError("EMPTY_RANGE_SET", "range set has no ranges");
    for (const r of this.ranges) r.canonicalize();
    this.#checkFamiliesAndOverlaps();
    return this;
  }

  /**
   * Whether any range holds `ip`.
   * @throws IpamError INVALID_ADDRESS for a non-address, or a range's canonicalize error.
   */
  contains(ip: string): boolean {
    return this.#find(ip) !== undefined;
  }

  /**
   * The range that holds `ip`.
   * @throws IpamError NOT_IN_RANGE naming the address and the set when no range holds it;
   *   INVALID_ADDRESS for a non-address.
   */
  rangeFor(ip: string): Range {
    const r = this.#find(ip);
    if (r === undefined) throw new IpamError("NOT_IN_RANGE", `${ip} is not in range set ${this.toString()}`);
    return r;
  }

  /** Whether any range of this set overlaps any range of `other`. */
  overlaps(other: RangeSet): boolean {
    return this.ranges.some((r) => other.ranges.some((o) => r.overlaps(o)));
  }

  /** The ranges as `start-end`, joined by `,` — how messages name the set. */
  toString(): string {
    return this.ranges.map((r) => r.toString()).join(",");
  }

  /** The ranges as plain objects. */
  toJSON(): Partial<RangeInit>[] {
    return this.ranges.map((r) => r.toJSON());
  }

  #find(ip: string): Range | undefined {
    const { family, value } = parseAddress(ip);
    return this.ranges.find((r) => {
      const x = resolveRange(r);
      return x.family === family && value >= x.start && value <= x.end;
    });
  }

  #checkFamiliesAndOverlaps(): void {
    const first = this.ranges[0];
    if (first === undefined) return;
    const family = resolveRange(first).family;
    for (const r of this.ranges) {
      const x = resolveRange(r);
      if (x.family !== family) {
        throw new IpamError(
          "MIXED_FAMILIES",
          `range set mixes address families: ${first.toString()} is ${familyName(family)} but ` +
            `${r.toString()} is ${familyName(x.family)}`,
        );
      }
    }
    // Sorted by start, some pair overlaps exactly when some neighbouring pair does: O(n log n).
    const sorted = this.ranges
      .map((r) => ({ r, x: resolveRange(r) }))
      .sort((a, b) => (a.x.start < b.x.start ? -1 : 1));
    for (let i = 1; i < sorted.length; i++) {
      const prev = sorted[i - 1];
      const cur = sorted[i];
      if (prev !== undefined && cur !== undefined && cur.x.start <= prev.x.end) {
        const [a, b] = this.ranges.indexOf(prev.r) < this.ranges.indexOf(cur.r) ? [prev, cur] : [cur, prev];
        throw new IpamError(
          "OVERLAPPING_RANGES",
          `ranges ${a.r.toString()} and ${b.r.toString()} overlap (they share ${formatAddress(family, cur.x.start)})`,
        );
      }
    }
  }
}
