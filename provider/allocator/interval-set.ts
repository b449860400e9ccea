import { AvlTree } from "./avl-tree";

/** The read side of an {@link IntervalSet}; what stores hand to the allocator. */
export interface ReadonlyIntervalSet {
  /** How many values the set holds. */
  readonly size: bigint;
  /** How many disjoint intervals represent it. */
  readonly intervalCount: number;
  /** Whether `value` is in the set. */
  has(value: bigint): boolean;
  /** The smallest value ≥ `from` that is not in the set. */
  nextAbsent(from: bigint): bigint;
  /** How many values of `[start, end]` are in the set. */
  countIn(start: bigint, end: bigint): bigint;
  /** The maximal intervals `[start, end]` in ascending order, clipped to `[from, to]` when given. */
  intervals(from?: bigint, to?: bigint): IterableIterator<[bigint, bigint]>;
}

/**
 * A set of bigints stored as sorted, disjoint, non-adjacent closed intervals in a balanced tree.
 * Adding or removing a value or a block, membership and "next value not in the set" are O(log n) in
 * the number of intervals, so a contiguous run of a million taken addresses costs one node and an
 * IPv6 /64 is never enumerated. Values are absolute address values; the set itself has no family.
 */
export class IntervalSet implements ReadonlyIntervalSet {
  /** start → end of each interval. */
  readonly #tree = new AvlTree<bigint>();
  #size = 0n;

  /** @param intervals - initial `[start, end]` blocks (inclusive; may overlap or touch). */
  constructor(intervals: Iterable<readonly [bigint, bigint]> = []) {
    for (const [start, end] of intervals) this.add(start, end);
  }

  /** How many values the set holds. */
  get size(): bigint {
    return this.#size;
  }

  /** How many disjoint intervals represent it (the cost driver, not the size). */
  get intervalCount(): number {
    return this.#tree.count;
  }

  /** Whether `value` is in the set. O(log n). */
  has(value: bigint): boolean {
    const n = this.#tree.floor(value);
    return n !== undefined && n.value >= value;
  }

  /** The smallest value ≥ `from` that is not in the set. O(log n). */
  nextAbsent(from: bigint): bigint {
    const n = this.#tree.floor(from);
    // Intervals never touch, so the value after an interval's end is always absent.
    return n !== undefined && n.value >= from ? n.value + 1n : from;
  }

  /**
   * Adds every value of `[start, end]`; returns how many were not already present.
   * @throws RangeError when `end < start`.
   */
  add(start: bigint, end: bigint = start): bigint {
    if (end < start) throw new RangeError(`interval end ${end} is before its start ${start}`);
    const left = this.#tree.floor(start);
    let lo = start;
    let hi = end;
    let merged = 0n;
    if (left !== undefined && left.value + 1n >= start) {
      if (left.value >= end) return 0n;
      const next = this.#tree.higher(left.key);
      if (next === undefined || next.key > end + 1n) {
        // The common case of sequential allocation: the block just extends its left neighbour.
        const added = end - left.value;
        left.value = end;
        this.#size += added;
        return added;
      }
      lo = left.key;
      merged = left.value - left.key + 1n;
    }
    for (let n = this.#tree.higher(lo); n !== undefined && n.key <= hi + 1n; n = this.#tree.higher(lo)) {
      merged += n.value - n.key + 1n;
      if (n.value > hi) hi = n.value;
      this.#tree.delete(n.key);
    }
    if (left !== undefined && left.key === lo) left.value = hi;
    else this.#tree.set(lo, hi);
    const added = hi - lo + 1n - merged;
    this.#size += added;
    return added;
  }

  /**
   * Removes every value of `[start, end]`; returns how many were present.
   * @throws RangeError when `end < start`.
   */
  delete(start: bigint, end: bigint = start): bigint {
    if (end < start) throw new RangeError(`interval end ${end} is before its start ${start}`);
    const before = this.#size;
    for (let n = this.#tree.floor(end); n !== undefined && n.value >= start; n = this.#tree.floor(end)) {
      const { key, value } = n;
      this.#tree.delete(key);
      this.#size -= value - key + 1n;
      if (value > end) {
        this.#tree.set(end + 1n, value);
        this.#size += value - end;
      }
      if (key < start) {
        this.#tree.set(key, start - 1n);
        this.#size += start - key;
        break;
      }
    }
    return before - this.#size;
  }

  /** How many values of `[start, end]` are in the set; O(log n + intervals crossed). */
  countIn(start: bigint, end: bigint): bigint {
    let total = 0n;
    for (const [s, e] of this.intervals(start, end)) total += e - s + 1n;
    return total;
  }

  /** The maximal intervals `[start, end]` in ascending order, clipped to `[from, to]` when given. */
  *intervals(from?: bigint, to?: bigint): IterableIterator<[bigint, bigint]> {
    let n = from === undefined ? this.#tree.first() : this.#tree.floor(from);
    if (n !== undefined && from !== undefined && n.value < from) n = this.#tree.higher(n.key);
    if (n === undefined && from !== undefined) n = this.#tree.higher(from);
    for (; n !== undefined; n = this.#tree.higher(n.key)) {
      if (to !== undefined && n.key > to) return;
      const s = from !== undefined && n.key < from ? from : n.key;
      const e = to !== undefined && n.value > to ? to : n.value;
      yield [s, e];
    }
  }

  /** An independent copy. */
  clone(): IntervalSet {
    return new IntervalSet(this.intervals());
  }

  /** Removes everything. */
  clear(): void {
    this.#tree.clear();
    this.#size = 0n;
  }
}

/**
 * The smallest value of `[from, to]` that is in none of the given sets, or `undefined` when there is
 * none. Each step jumps over a whole interval of one set, so the cost is O(k log n) where k is the
 * number of interval boundaries crossed, not the number of values skipped.
 */
export function firstAbsentIn(
  from: bigint,
  to: bigint,
  a: ReadonlyIntervalSet,
  b?: ReadonlyIntervalSet,
  c?: ReadonlyIntervalSet,
): bigint | undefined {
  let x = from;
  while (x <= to) {
    let y = a.nextAbsent(x);
    if (b !== undefined) y = b.nextAbsent(y);
    if (c !== undefined) y = c.nextAbsent(y);
    if (y === x) return x;
    x = y;
  }
  return undefined;
}

/** How many values of `[from, to]` are in at least one of `a` and `b`. */
export function countUnionIn(
  a: ReadonlyIntervalSet,
  b: ReadonlyIntervalSet,
  from: bigint,
  to: bigint,
): bigint {
  let both = 0n;
  const ia = a.intervals(from, to);
  const ib = b.intervals(from, to);
  let x = ia.next();
  let y = ib.next();
  while (!x.done && !y.done) {
    const lo = x.value[0] > y.value[0] ? x.value[0] : y.value[0];
    const hi = x.value[1] < y.value[1] ? x.value[1] : y.value[1];
    if (lo <= hi) both += hi - lo + 1n;
    if (x.value[1] < y.value[1]) x = ia.next();
    else y = ib.next();
  }
  return a.countIn(from, to) + b.countIn(from, to) - both;
}
