import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IntervalSet } from "../../provider/allocator";

const list = (s: IntervalSet): Array<[bigint, bigint]> => [...s.intervals()];

describe("IntervalSet", () => {
  it.each<[string, Array<[bigint, bigint]>, Array<[bigint, bigint]>]>([
    [
      "merges adjacent blocks",
      [
        [1n, 3n],
        [4n, 6n],
      ],
      [[1n, 6n]],
    ],
    [
      "merges overlapping blocks",
      [
        [1n, 5n],
        [3n, 9n],
      ],
      [[1n, 9n]],
    ],
    [
      "keeps gaps",
      [
        [1n, 2n],
        [4n, 5n],
      ],
      [
        [1n, 2n],
        [4n, 5n],
      ],
    ],
    [
      "bridges a gap",
      [
        [1n, 2n],
        [6n, 7n],
        [3n, 5n],
      ],
      [[1n, 7n]],
    ],
    [
      "swallows inner blocks",
      [
        [2n, 3n],
        [5n, 6n],
        [8n, 9n],
        [0n, 20n],
      ],
      [[0n, 20n]],
    ],
    [
      "sorts out-of-order inserts",
      [
        [10n, 10n],
        [1n, 1n],
        [5n, 5n],
      ],
      [
        [1n, 1n],
        [5n, 5n],
        [10n, 10n],
      ],
    ],
    [
      "handles 128-bit values",
      [[(1n << 128n) - 2n, (1n << 128n) - 1n]],
      [[(1n << 128n) - 2n, (1n << 128n) - 1n]],
    ],
  ])("add %s", (_name, blocks, expected) => {
    const set = new IntervalSet(blocks);
    expect(list(set)).toEqual(expected);
    expect(set.size).toBe(expected.reduce((n, [s, e]) => n + e - s + 1n, 0n));
  });

  it.each<[string, [bigint, bigint], Array<[bigint, bigint]>]>([
    [
      "a middle value splits a block",
      [5n, 5n],
      [
        [1n, 4n],
        [6n, 10n],
        [20n, 30n],
      ],
    ],
    [
      "a prefix shrinks a block",
      [0n, 3n],
      [
        [4n, 10n],
        [20n, 30n],
      ],
    ],
    [
      "a span across blocks",
      [8n, 25n],
      [
        [1n, 7n],
        [26n, 30n],
      ],
    ],
    ["a whole block", [1n, 10n], [[20n, 30n]]],
    [
      "nothing in a gap",
      [12n, 18n],
      [
        [1n, 10n],
        [20n, 30n],
      ],
    ],
  ])("delete: %s", (_name, [s, e], expected) => {
    const set = new IntervalSet([
      [1n, 10n],
      [20n, 30n],
    ]);
    const before = set.size;
    const removed = set.delete(s, e);
    expect(list(set)).toEqual(expected);
    expect(set.size).toBe(before - removed);
  });

  it("answers has, nextAbsent, countIn and clipped intervals", () => {
    const set = new IntervalSet([
      [10n, 19n],
      [30n, 39n],
    ]);
    expect([9n, 10n, 19n, 20n, 35n].map((v) => set.has(v))).toEqual([false, true, true, false, true]);
    expect([5n, 10n, 15n, 20n, 39n].map((v) => set.nextAbsent(v))).toEqual([5n, 20n, 20n, 20n, 40n]);
    expect(set.countIn(15n, 32n)).toBe(8n);
    expect([...set.intervals(15n, 32n)]).toEqual([
      [15n, 19n],
      [30n, 32n],
    ]);
    expect(set.intervalCount).toBe(2);
  });

  it("rejects a reversed block", () => {
    expect(() => new IntervalSet().add(5n, 4n)).toThrow(RangeError);
    expect(() => new IntervalSet().delete(5n, 4n)).toThrow(RangeError);
  });

  it("never enumerates: a /64 worth of values is one interval", () => {
    const set = new IntervalSet([[0n, (1n << 64n) - 1n]]);
    expect(set.size).toBe(1n << 64n);
    expect(set.nextAbsent(12345n)).toBe(1n << 64n);
  });

  it("stays consistent through thousands of scattered inserts and removals", () => {
    const set = new IntervalSet();
    const order = (n: number, step: number): number[] => Array.from({ length: n }, (_, i) => (i * step) % n);
    for (const i of order(5000, 7919)) set.add(BigInt(i * 2));
    expect(set.intervalCount).toBe(5000);
    expect(set.size).toBe(5000n);
    for (const i of order(5000, 104729)) if (i % 3 !== 0) set.delete(BigInt(i * 2));
    expect(set.intervalCount).toBe(1667);
    for (let i = 0; i < 5000; i++) expect(set.has(BigInt(i * 2))).toBe(i % 3 === 0);
    for (const i of order(5000, 7919)) set.add(BigInt(i * 2 + 1));
    // Now every odd value and every sixth even value: runs like 5,6,7 and lone odd values between.
    for (let v = 0; v < 10000; v++) expect(set.has(BigInt(v))).toBe(v % 2 === 1 || v % 6 === 0);
    expect(set.size).toBe(5000n + 1667n);
    expect(set.intervalCount).toBe(3334); // [6k−1, 6k+1] and 6k+3 for k = 0..1666
  });

  const op = fc.oneof(
    fc.record({
      kind: fc.constant("add" as const),
      start: fc.integer({ min: 0, max: 80 }),
      len: fc.integer({ min: 0, max: 6 }),
    }),
    fc.record({
      kind: fc.constant("delete" as const),
      start: fc.integer({ min: 0, max: 80 }),
      len: fc.integer({ min: 0, max: 10 }),
    }),
  );

  it("behaves like a naive Set of values (property)", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const set = new IntervalSet();
        const model = new Set<number>();
        for (const { kind, start, len } of ops) {
          const changed =
            kind === "add"
              ? set.add(BigInt(start), BigInt(start + len))
              : set.delete(BigInt(start), BigInt(start + len));
          let expected = 0;
          for (let v = start; v <= start + len; v++) {
            if (kind === "add" ? model.has(v) : !model.has(v)) continue;
            if (kind === "add") model.add(v);
            else model.delete(v);
            expected++;
          }
          expect(changed).toBe(BigInt(expected));
        }
        expect(set.size).toBe(BigInt(model.size));
        for (let v = 0; v <= 100; v++) {
          expect(set.has(BigInt(v))).toBe(model.has(v));
          let absent = v;
          while (model.has(absent)) absent++;
          expect(set.nextAbsent(BigInt(v))).toBe(BigInt(absent));
        }
        // Canonical form: sorted, disjoint and never touching.
        const blocks = list(set);
        for (let i = 1; i < blocks.length; i++) expect(blocks[i]![0]).toBeGreaterThan(blocks[i - 1]![1] + 1n);
        expect(set.countIn(20n, 60n)).toBe(BigInt([...model].filter((v) => v >= 20 && v <= 60).length));
      }),
    );
  });
});
