import fc from "fast-check";
import { Address6 } from "ip-address";
import { describe, expect, it } from "vitest";
import {
  canonicalAddress,
  freeCount,
  IpAllocator,
  isIpamError,
  MemoryStore,
  nextFree,
  type RangeInit,
  RangeSet,
} from "../../provider/allocator";
import { asyncOnly } from "../support/async-only-store";

/** Formats a value with the ip-address package, an implementation independent of ours. */
function fmt(family: 4 | 6, v: bigint): string {
  if (family === 6) return Address6.fromBigInt(v).correctForm();
  return [24n, 16n, 8n, 0n].map((s) => String((v >> s) & 255n)).join(".");
}

interface ModelRange {
  start: bigint;
  end: bigint;
  gateway: bigint;
  prefix: number;
}

/** A pool: up to three small ranges in distinct /28 (or /124) blocks, plus exclusions. */
interface Pool {
  family: 4 | 6;
  inits: RangeInit[];
  ranges: ModelRange[];
  exclude: string[];
  excluded: Set<bigint>;
}

const V4_BASE = 0x0a000000n; // 10.0.0.0
const V6_BASE = 0x20010db8000000000000000000000000n; // 2001:db8::

const poolArb: fc.Arbitrary<Pool> = fc
  .record({
    family: fc.constantFrom<4 | 6>(4, 6),
    blocks: fc.uniqueArray(fc.integer({ min: 0, max: 7 }), { minLength: 1, maxLength: 3 }),
    shapes: fc.array(
      fc.record({
        a: fc.integer({ min: 0, max: 15 }),
        b: fc.integer({ min: 0, max: 15 }),
        gw: fc.option(fc.integer({ min: 0, max: 15 }), { nil: undefined }),
        bounded: fc.boolean(),
      }),
      { minLength: 3, maxLength: 3 },
    ),
    excl: fc.uniqueArray(fc.integer({ min: 0, max: 127 }), { maxLength: 6 }),
  })
  .map(({ family, blocks, shapes, excl }) => {
    const base = family === 4 ? V4_BASE : V6_BASE;
    const prefix = family === 4 ? 28 : 124;
    const inits: RangeInit[] = [];
    const ranges: ModelRange[] = [];
    blocks.forEach((block, i) => {
      const shape = shapes[i] ?? { a: 0, b: 15, gw: undefined, bounded: false };
      const net = base + BigInt(block * 16);
      const lo = Math.min(shape.a, shape.b);
      const hi = Math.max(shape.a, shape.b);
      // Without explicit bounds host-local's defaults apply (IPv4 drops the broadcast address).
      const start = shape.bounded ? net + BigInt(lo) : net + 1n;
      const end = shape.bounded ? net + BigInt(hi) : family === 4 ? net + 14n : net + 15n;
      const gateway = shape.gw === undefined ? net + 1n : net + BigInt(shape.gw);
      const init: RangeInit = { subnet: `${fmt(family, net)}/${prefix}` };
      if (shape.bounded) Object.assign(init, { rangeStart: fmt(family, start), rangeEnd: fmt(family, end) });
      if (shape.gw !== undefined) init.gateway = fmt(family, gateway);
      inits.push(init);
      ranges.push({ start, end, gateway, prefix });
    });
    const excluded = new Set(excl.map((x) => base + BigInt(x)));
    return { family, inits, ranges, exclude: [...excluded].map((v) => fmt(family, v)), excluded };
  });

type Op = { kind: "get"; id: number; request?: number } | { kind: "release"; id: number };
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant("get" as const), id: fc.integer({ min: 0, max: 9 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("get" as const),
      id: fc.integer({ min: 0, max: 9 }),
      request: fc.integer({ min: 0, max: 130 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("release" as const), id: fc.integer({ min: 0, max: 9 }) }),
  },
);

/** A literal, address-by-address transcription of host-local's iterator, plus exclusions and lowest-free. */
class Model {
  readonly owner = new Map<bigint, string>();
  last: bigint | undefined;
  constructor(
    readonly pool: Pool,
    readonly strategy: "round-robin" | "lowest-free",
  ) {}

  rangeIndex(v: bigint): number {
    return this.pool.ranges.findIndex((r) => v >= r.start && v <= r.end);
  }
  usable(v: bigint, r: ModelRange): boolean {
    return v !== r.gateway && !this.pool.excluded.has(v) && !this.owner.has(v);
  }
  next(): bigint | undefined {
    const rs = this.pool.ranges;
    if (this.strategy === "lowest-free") {
      for (const r of rs) for (let v = r.start; v <= r.end; v++) if (this.usable(v, r)) return v;
      return undefined;
    }
    let idx = this.last !== undefined ? this.rangeIndex(this.last) : -1;
    let cur: bigint | undefined = idx >= 0 ? this.last : undefined;
    let startAt: bigint | undefined;
    if (idx < 0) idx = 0;
    for (;;) {
      const r = rs[idx] as ModelRange;
      if (cur === undefined) {
        cur = r.start;
        startAt = cur;
      } else {
        if (cur === r.end) {
          idx = (idx + 1) % rs.length;
          cur = (rs[idx] as ModelRange).start;
        } else {
          cur++;
        }
        if (startAt === undefined) startAt = cur;
        else if (cur === startAt) return undefined;
      }
      if (this.usable(cur, rs[idx] as ModelRange)) return cur;
    }
  }
  holds(id: string): boolean {
    return [...this.owner].some(([v, o]) => o === id && this.rangeIndex(v) >= 0);
  }
  /** Expected outcome of get: an address value or an error code. */
  get(id: string, request?: bigint): bigint | string {
    let v: bigint | undefined;
    if (request !== undefined) {
      const i = this.rangeIndex(request);
      if (i < 0) return "NOT_IN_RANGE";
      const r = this.pool.ranges[i] as ModelRange;
      if (request === r.gateway || this.pool.excluded.has(request)) return "IP_UNAVAILABLE";
      if (this.holds(id)) return "DUPLICATE_ALLOCATION";
      if (this.owner.has(request)) return "IP_UNAVAILABLE";
      v = request;
    } else {
      if (this.holds(id)) return "DUPLICATE_ALLOCATION";
      v = this.next();
      if (v === undefined) return "POOL_EXHAUSTED";
    }
    this.owner.set(v, id);
    this.last = v;
    return v;
  }
  release(id: string): void {
    for (const [v, o] of [...this.owner]) if (o === id) this.owner.delete(v);
  }
}

describe("allocator properties", () => {
  it("matches host-local's iterator address by address, never leaves the set, never repeats (both strategies, v4 and v6)", async () => {
    await fc.assert(
      fc.asyncProperty(
        poolArb,
        fc.constantFrom("round-robin" as const, "lowest-free" as const),
        fc.array(opArb, { maxLength: 60 }),
        fc.boolean(),
        async (pool, strategy, ops, viaAsync) => {
          const rangeSet = new RangeSet(pool.inits);
          const store = new MemoryStore();
          // Half the runs reach the store through its async methods only, half through its sync face.
          const alloc = new IpAllocator(rangeSet, viaAsync ? asyncOnly(store) : store, 0, {
            strategy,
            exclude: pool.exclude,
          });
          const model = new Model(pool, strategy);
          const base = pool.family === 4 ? V4_BASE : V6_BASE;
          for (const op of ops) {
            const id = `id${op.id}`;
            if (op.kind === "release") {
              await alloc.release(id);
              model.release(id);
              continue;
            }
            const request = op.request === undefined ? undefined : base + BigInt(op.request);
            const planned =
              request === undefined
                ? tryCode(() =>
                    nextFree({
                      rangeSet,
                      exclude: pool.exclude,
                      taken: [...model.owner.keys()].map((v) => fmt(pool.family, v)),
                      cursor: model.last === undefined ? undefined : fmt(pool.family, model.last),
                      strategy,
                    }),
                  )
                : undefined;
            const expected = model.get(id, request);
            let actual: string;
            try {
              const got = await alloc.get(id, request === undefined ? undefined : fmt(pool.family, request));
              actual = got.address;
              const r = pool.ranges[model.rangeIndex(expected as bigint)] as ModelRange;
              expect(got.gateway).toBe(fmt(pool.family, r.gateway));
            } catch (err) {
              if (!isIpamError(err)) throw err;
              actual = err.code;
            }
            if (typeof expected === "string") {
              expect(actual).toBe(expected);
            } else {
              const r = pool.ranges[model.rangeIndex(expected)] as ModelRange;
              expect(actual).toBe(`${fmt(pool.family, expected)}/${r.prefix}`);
              // The pure planner agrees with what the allocator did.
              if (planned !== undefined) expect(planned).toBe(fmt(pool.family, expected));
            }
          }
          // Invariants over the final state: inside the set, not excluded, not a gateway, one owner each.
          const held = store.snapshot().reservations;
          expect(Object.keys(held).length).toBe(model.owner.size);
          for (const [ip, owner] of Object.entries(held)) {
            const v = [...model.owner.keys()].find((x) => fmt(pool.family, x) === ip);
            expect(v).toBeDefined();
            expect(model.owner.get(v as bigint)).toBe(owner);
            const r = pool.ranges[model.rangeIndex(v as bigint)];
            expect(r).toBeDefined();
            expect(v).not.toBe(r?.gateway);
            expect(pool.excluded.has(v as bigint)).toBe(false);
          }
          expect(freeCount(rangeSet, pool.exclude, Object.keys(held))).toBe(BigInt(countFree(model)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("release then get gives the same address back with lowest-free, and the next one with round-robin", async () => {
    await fc.assert(
      fc.asyncProperty(poolArb, fc.integer({ min: 0, max: 8 }), async (pool, before) => {
        for (const strategy of ["lowest-free", "round-robin"] as const) {
          const alloc = new IpAllocator(new RangeSet(pool.inits), new MemoryStore(), 0, {
            strategy,
            exclude: pool.exclude,
          });
          const model = new Model(pool, strategy);
          for (let i = 0; i < before; i++) {
            if (typeof model.get(`pre${i}`) === "bigint") await alloc.get(`pre${i}`);
          }
          const first = model.get("x");
          if (typeof first !== "bigint") return;
          const a = await alloc.get("x");
          await alloc.release("x");
          model.release("x");
          const b = await alloc.get("x");
          const second = model.get("x") as bigint;
          expect(b.address.split("/")[0]).toBe(fmt(pool.family, second));
          if (strategy === "lowest-free") expect(b.address).toBe(a.address);
        }
      }),
      { numRuns: 150 },
    );
  });

  it("formats IPv6 as RFC 5952 exactly like an independent implementation, from any spelling", () => {
    const group = fc.integer({ min: 0, max: 0xffff });
    const sparse = fc.oneof(group, fc.constant(0), fc.constant(0));
    fc.assert(
      fc.property(
        fc.array(sparse, { minLength: 8, maxLength: 8 }),
        fc.boolean(),
        fc.boolean(),
        (groups, upper, padded) => {
          const value = groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
          fc.pre(value >> 32n !== 0xffffn); // IPv4-mapped addresses are IPv4 here
          let text = groups.map((g) => (padded ? g.toString(16).padStart(4, "0") : g.toString(16))).join(":");
          if (upper) text = text.toUpperCase();
          const expected = Address6.fromBigInt(value).correctForm();
          expect(canonicalAddress(text)).toBe(expected);
          expect(canonicalAddress(expected)).toBe(expected);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

function tryCode(fn: () => string): string {
  try {
    return fn();
  } catch (err) {
    if (isIpamError(err)) return err.code;
    throw err;
  }
}

function countFree(model: Model): number {
  let n = 0;
  for (const r of model.pool.ranges) for (let v = r.start; v <= r.end; v++) if (model.usable(v, r)) n++;
  return n;
}
