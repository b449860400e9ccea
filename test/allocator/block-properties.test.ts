import fc from "fast-check";
import { Address6 } from "ip-address";
import { describe, expect, it } from "vitest";
import {
  AddressSet,
  checkBlock,
  IntervalSet,
  isIpamError,
  nextFreeBlock,
  type RangeInit,
  RangeSet,
} from "../../provider/allocator";

/** Formats a value with the ip-address package, an implementation independent of ours. */
function fmt(family: 4 | 6, v: bigint): string {
  if (family === 6) return Address6.fromBigInt(v).correctForm();
  return [24n, 16n, 8n, 0n].map((s) => String((v >> s) & 255n)).join(".");
}

const V4_BASE = 0x0a000000n; // 10.0.0.0
const V6_BASE = 0x20010db8000000000000000000000000n; // 2001:db8::

interface Block {
  start: bigint;
  size: bigint;
}

/** A range as blocks see it: its allocatable span [start, end] and its gateway. */
interface Segment {
  start: bigint;
  end: bigint;
  gateway: bigint;
}

/**
 * A pool in a 256-address universe: up to three subnets of 4 to 64 addresses, one per quarter, in
 * random range-set order, each one range or two ranges splitting it, with rangeStart, rangeEnd and
 * gateway given or left to host-local's defaults (a gateway may lie inside the range, elsewhere in
 * the subnet, or outside it); plus taken and excluded entries (addresses and small CIDRs, some
 * outside every range).
 */
interface Pool {
  family: 4 | 6;
  bits: number;
  inits: RangeInit[];
  /** The ranges in range-set order, with host-local's defaults worked out here, not by the allocator. */
  segments: Segment[];
  exclude: string[];
  excluded: Set<bigint>;
  takenEntries: Block[];
}

const entryArb = fc.record({
  offset: fc.integer({ min: 0, max: 255 }),
  hostBits: fc.integer({ min: 0, max: 4 }),
});

/** A bound or gateway: left out (the default), or an offset into the subnet (or, a gateway, beyond it). */
const fieldArb = fc.option(fc.nat({ max: 1000 }), { nil: undefined });

const poolArb: fc.Arbitrary<Pool> = fc
  .record({
    family: fc.constantFrom<4 | 6>(4, 6),
    quarters: fc.uniqueArray(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 3 }),
    shapes: fc.array(
      fc.record({
        hostBits: fc.integer({ min: 2, max: 6 }),
        slot: fc.nat(),
        split: fc.boolean(),
        cut: fc.nat(),
        bounds: fc.array(fc.record({ start: fieldArb, end: fieldArb, gateway: fieldArb }), {
          minLength: 2,
          maxLength: 2,
        }),
      }),
      { minLength: 3, maxLength: 3 },
    ),
    excl: fc.array(entryArb, { maxLength: 3 }),
    taken: fc.array(entryArb, { maxLength: 8 }),
  })
  .map(({ family, quarters, shapes, excl, taken }) => {
    const base = family === 4 ? V4_BASE : V6_BASE;
    const bits = family === 4 ? 32 : 128;
    const inits: RangeInit[] = [];
    const segments: Segment[] = [];
    quarters.forEach((q, i) => {
      const { hostBits, slot, split, cut, bounds } = shapes[i] as (typeof shapes)[number];
      const size = 1n << BigInt(hostBits);
      const start = base + BigInt(q * 64) + (BigInt(slot) % (64n / size)) * size;
      const last = start + size - 1n;
      const subnet = `${fmt(family, start)}/${bits - hostBits}`;
      // host-local's defaults: gateway and rangeStart network + 1, rangeEnd broadcast − 1 (IPv4).
      const dflt = { start: start + 1n, end: family === 4 ? last - 1n : last, gateway: start + 1n };
      // One range over [lo, hi] of the subnet, or two: [lo, mid] and [mid + 1, hi].
      const parts: [bigint, bigint][] = [];
      if (!split) parts.push([start, last]);
      else {
        const mid = start + (BigInt(cut) % (size - 1n));
        parts.push([start, mid], [mid + 1n, last]);
      }
      parts.forEach(([lo, hi], k) => {
        const b = bounds[k] as (typeof bounds)[number];
        const within = (o: number | undefined, from: bigint, to: bigint) =>
          o === undefined ? undefined : from + (BigInt(o) % (to - from + 1n));
        // A split range gives both bounds (the defaults would overlap the other part).
        let rs = within(b.start, lo, hi) ?? (split ? lo : undefined);
        let re = within(b.end, rs ?? dflt.start, hi) ?? (split ? hi : undefined);
        if ((rs ?? dflt.start) > (re ?? dflt.end)) [rs, re] = [lo, hi];
        // A gateway anywhere in the subnet, or (an offset past it) somewhere in the universe.
        const gw =
          b.gateway === undefined
            ? undefined
            : b.gateway < 500
              ? start + (BigInt(b.gateway) % size)
              : base + (BigInt(b.gateway) % 256n);
        const init: RangeInit = { subnet };
        if (rs !== undefined) init.rangeStart = fmt(family, rs);
        if (re !== undefined) init.rangeEnd = fmt(family, re);
        if (gw !== undefined) init.gateway = fmt(family, gw);
        inits.push(init);
        segments.push({ start: rs ?? dflt.start, end: re ?? dflt.end, gateway: gw ?? dflt.gateway });
      });
    });
    const block = ({ offset, hostBits }: { offset: number; hostBits: number }): Block => {
      const size = 1n << BigInt(hostBits);
      return { start: base + (BigInt(offset) / size) * size, size };
    };
    const text = (b: Block): string =>
      b.size === 1n
        ? fmt(family, b.start)
        : `${fmt(family, b.start)}/${bits - b.size.toString(2).length + 1}`;
    const exclBlocks = excl.map(block);
    const excluded = new Set<bigint>();
    for (const b of exclBlocks) for (let v = b.start; v < b.start + b.size; v++) excluded.add(v);
    return {
      family,
      bits,
      inits,
      segments,
      exclude: exclBlocks.map(text),
      excluded,
      takenEntries: taken.map(block),
    };
  });

const cidr = (pool: Pool, b: Block): string =>
  `${fmt(pool.family, b.start)}/${pool.bits - b.size.toString(2).length + 1}`;

/** Whether block `b` lies between the range's rangeStart and rangeEnd. */
const within = (s: Segment, b: Block): boolean => b.start >= s.start && b.start + b.size - 1n <= s.end;

/** The brute-force oracle: enumerates every aligned candidate and tests it value by value. */
class Oracle {
  readonly taken = new Set<bigint>();
  /** Each range's gateway where that range holds it (host-local skips it there). */
  readonly gateways = new Set<bigint>();
  constructor(readonly pool: Pool) {
    for (const b of pool.takenEntries) this.hold(b);
    for (const s of pool.segments)
      if (s.gateway >= s.start && s.gateway <= s.end) this.gateways.add(s.gateway);
  }
  hold(b: Block): void {
    for (let v = b.start; v < b.start + b.size; v++) this.taken.add(v);
  }
  release(b: Block): void {
    for (let v = b.start; v < b.start + b.size; v++) this.taken.delete(v);
  }
  free(start: bigint, size: bigint): boolean {
    for (let v = start; v < start + size; v++)
      if (this.taken.has(v) || this.pool.excluded.has(v) || this.gateways.has(v)) return false;
    return true;
  }
  /** Every free aligned block of `size` between the range's rangeStart and rangeEnd, ascending. */
  candidates(segment: Segment, size: bigint): Block[] {
    const out: Block[] = [];
    for (let s = ((segment.start + size - 1n) / size) * size; s + size - 1n <= segment.end; s += size) {
      if (this.free(s, size)) out.push({ start: s, size });
    }
    return out;
  }
  /** First fit after the cursor's last address, in range-set order, wrapping. */
  firstFit(size: bigint, cursor?: bigint): Block | undefined {
    const segments = this.pool.segments;
    const at = segments.findIndex((s) => cursor !== undefined && cursor >= s.start && cursor <= s.end);
    if (at < 0) return segments.flatMap((s) => this.candidates(s, size))[0];
    const c = cursor as bigint;
    const home = this.candidates(segments[at] as Segment, size);
    const order = [
      ...home.filter((b) => b.start > c),
      ...segments.slice(at + 1).flatMap((s) => this.candidates(s, size)),
      ...segments.slice(0, at).flatMap((s) => this.candidates(s, size)),
      ...home.filter((b) => b.start <= c),
    ];
    return order[0];
  }
  /**
   * Best fit: for each free candidate, the largest free aligned block around it inside its range;
   * the candidate whose container is smallest, then lowest, then the lowest candidate in it.
   */
  bestFit(size: bigint): Block | undefined {
    let best: { container: Block; block: Block } | undefined;
    for (const segment of this.pool.segments) {
      for (const block of this.candidates(segment, size)) {
        let container = block;
        for (;;) {
          const up = container.size * 2n;
          const start = container.start - (container.start % up);
          if (!within(segment, { start, size: up }) || !this.free(start, up)) break;
          container = { start, size: up };
        }
        const rank = (x: { container: Block; block: Block }): bigint[] => [
          x.container.size,
          x.container.start,
          x.block.start,
        ];
        if (best === undefined || lexLess(rank({ container, block }), rank(best)))
          best = { container, block };
      }
    }
    return best?.block;
  }
}

/** The taken entries in one of the three forms `taken` accepts. */
function takenInput(pool: Pool, form: "strings" | "address-set" | "interval-set", oracle: Oracle) {
  if (form === "strings")
    return pool.takenEntries.map((b) => (b.size === 1n ? fmt(pool.family, b.start) : cidr(pool, b)));
  if (form === "address-set") return new AddressSet([...oracle.taken].map((v) => fmt(pool.family, v)));
  return new IntervalSet(pool.takenEntries.map((b) => [b.start, b.start + b.size - 1n] as const));
}

function outcome(fn: () => string): string {
  try {
    return fn();
  } catch (err) {
    if (isIpamError(err)) return err.code;
    throw err;
  }
}

const hostBitsArb = fc.integer({ min: 0, max: 7 });
const strategyArb = fc.constantFrom("round-robin" as const, "lowest-free" as const);
const formArb = fc.constantFrom("strings" as const, "address-set" as const, "interval-set" as const);

describe("block properties", () => {
  it("the block is the oracle's choice (first fit after the cursor / best fit), or exhausted exactly when it finds none", () => {
    fc.assert(
      fc.property(
        poolArb,
        hostBitsArb,
        strategyArb,
        formArb,
        fc.option(
          fc.record({ offset: fc.integer({ min: 0, max: 300 }), hostBits: fc.integer({ min: 0, max: 6 }) }),
          {
            nil: undefined,
          },
        ),
        (pool, hostBits, strategy, form, cursorArb) => {
          const oracle = new Oracle(pool);
          const size = 1n << BigInt(hostBits);
          const base = pool.family === 4 ? V4_BASE : V6_BASE;
          const cursorBlock =
            cursorArb === undefined
              ? undefined
              : {
                  start:
                    base +
                    ((BigInt(cursorArb.offset) >> BigInt(cursorArb.hostBits)) << BigInt(cursorArb.hostBits)),
                  size: 1n << BigInt(cursorArb.hostBits),
                };
          const cursorLast =
            cursorBlock === undefined ? undefined : cursorBlock.start + cursorBlock.size - 1n;
          const expected =
            strategy === "lowest-free" ? oracle.bestFit(size) : oracle.firstFit(size, cursorLast);
          const actual = outcome(() =>
            nextFreeBlock({
              rangeSet: new RangeSet(pool.inits),
              prefixLength: pool.bits - hostBits,
              exclude: pool.exclude,
              taken: takenInput(pool, form, oracle),
              strategy,
              cursor: cursorBlock === undefined ? undefined : cidr(pool, cursorBlock),
            }),
          );
          expect(actual).toBe(expected === undefined ? "POOL_EXHAUSTED" : cidr(pool, expected));
          if (expected === undefined) return;
          // The invariants, stated on their own: aligned, between one range's rangeStart and
          // rangeEnd, not holding that range's gateway, overlapping nothing.
          expect(expected.start % size).toBe(0n);
          const home = pool.segments.find((s) => within(s, expected));
          expect(home).toBeDefined();
          expect(home!.gateway >= expected.start && home!.gateway < expected.start + size).toBe(false);
          expect(oracle.free(expected.start, size)).toBe(true);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("checkBlock accepts exactly the aligned blocks of one range (rangeStart to rangeEnd) that are free", () => {
    fc.assert(
      fc.property(poolArb, fc.integer({ min: 0, max: 300 }), hostBitsArb, (pool, offset, hostBits) => {
        const oracle = new Oracle(pool);
        const size = 1n << BigInt(hostBits);
        const base = pool.family === 4 ? V4_BASE : V6_BASE;
        const block = { start: base + (BigInt(offset) / size) * size, size };
        const inside = pool.segments.some((s) => within(s, block));
        const expected = !inside
          ? "NOT_IN_RANGE"
          : oracle.free(block.start, size)
            ? cidr(pool, block)
            : "IP_UNAVAILABLE";
        const actual = outcome(() =>
          checkBlock({
            rangeSet: new RangeSet(pool.inits),
            cidr: cidr(pool, block),
            exclude: pool.exclude,
            taken: takenInput(pool, "strings", oracle),
          }),
        );
        expect(actual).toBe(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it("carving into a growing taken set never overlaps; release and re-carve round-trips", () => {
    type Op = { kind: "carve"; hostBits: number } | { kind: "release"; pick: number };
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      { weight: 4, arbitrary: fc.record({ kind: fc.constant("carve" as const), hostBits: hostBitsArb }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("release" as const), pick: fc.nat() }) },
    );
    fc.assert(
      fc.property(poolArb, strategyArb, fc.array(opArb, { maxLength: 40 }), (pool, strategy, ops) => {
        const rangeSet = new RangeSet(pool.inits);
        const oracle = new Oracle(pool);
        const taken = new IntervalSet(
          pool.takenEntries.map((b) => [b.start, b.start + b.size - 1n] as const),
        );
        const held: Block[] = [];
        let cursor: string | undefined;
        let cursorLast: bigint | undefined;
        const carve = (prefixLength: number): string =>
          outcome(() =>
            nextFreeBlock({ rangeSet, prefixLength, exclude: pool.exclude, taken, strategy, cursor }),
          );
        for (const op of ops) {
          if (op.kind === "release") {
            const b = held.splice(op.pick % Math.max(held.length, 1), 1)[0];
            if (b === undefined) continue;
            taken.delete(b.start, b.start + b.size - 1n);
            oracle.release(b);
            continue;
          }
          const prefixLength = pool.bits - op.hostBits;
          const size = 1n << BigInt(op.hostBits);
          const got = carve(prefixLength);
          const expected =
            strategy === "lowest-free" ? oracle.bestFit(size) : oracle.firstFit(size, cursorLast);
          expect(got).toBe(expected === undefined ? "POOL_EXHAUSTED" : cidr(pool, expected));
          if (expected === undefined) continue;
          for (const h of held)
            expect(expected.start + size <= h.start || h.start + h.size <= expected.start).toBe(true);
          // Round trip: release at once and the taken set is as it was; lowest-free gives the same block back.
          const before = [...taken.intervals()];
          taken.add(expected.start, expected.start + size - 1n);
          taken.delete(expected.start, expected.start + size - 1n);
          expect([...taken.intervals()]).toEqual(before);
          if (strategy === "lowest-free") expect(carve(prefixLength)).toBe(got);
          taken.add(expected.start, expected.start + size - 1n);
          oracle.hold(expected);
          held.push(expected);
          cursor = got;
          cursorLast = expected.start + size - 1n;
        }
        expect(taken.size).toBe(BigInt(oracle.taken.size));
      }),
      { numRuns: 300 },
    );
  });
});

/** Whether `a` sorts before `b`, element by element. */
function lexLess(a: bigint[], b: bigint[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return (a[i] as bigint) < (b[i] as bigint);
  return false;
}
