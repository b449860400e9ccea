// Allocator benchmark: the public IpAllocator + MemoryStore path (what users get) and the pure
// nextFree path, against a naive lowest-free scan. Prints every figure with its target and exits
// non-zero when a target is missed. Needs the built package: npx tsc -p tsconfig.build.json.
import console from "node:console";
import { availableParallelism, loadavg } from "node:os";
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import process from "node:process";

const require = createRequire(import.meta.url);
let allocator;
try {
  allocator = require("../dist/allocator");
} catch (err) {
  console.error(`cannot load dist/allocator (${err.message}); build first: npx tsc -p tsconfig.build.json`);
  process.exit(2);
}
const { AddressSet, IpAllocator, MemoryStore, RangeSet, nextFree } = allocator;
// TypeScript that Node loads by stripping types; silence its note on the package's module type.
process.removeAllListeners("warning");
const { asyncOnly } = await import("../test/support/async-only-store.ts");

const gc = globalThis.gc ?? (() => {});
let failures = 0;

function report(name, value, unit, target, ok) {
  if (!ok) failures++;
  console.log(`${ok ? "PASS" : "FAIL"}  ${name}: ${value} ${unit} (target ${target})`);
}

/** Fills the pool through the public path; returns [allocations, milliseconds]. */
async function fill(subnet, strategy, limit = Infinity, wrap = (store) => store) {
  const allocator = new IpAllocator(new RangeSet([{ subnet }]), wrap(new MemoryStore()), 0, { strategy });
  gc();
  const t0 = performance.now();
  let n = 0;
  try {
    while (n < limit) await allocator.get(`id-${n++}`);
  } catch (err) {
    if (err.code !== "POOL_EXHAUSTED") throw err;
    n--;
  }
  return [n, performance.now() - t0];
}

/** What whereabouts and the egress operators do: walk from the first address, testing a Set of strings. */
function naiveLowestFreeFill(firstOctets, hostBits) {
  const prefix = `${firstOctets.join(".")}.`;
  const size = 2 ** hostBits;
  const taken = new Set();
  const t0 = performance.now();
  let n = 0;
  for (;;) {
    let found;
    for (let off = 2; off < size - 1; off++) {
      const ip = `${prefix}${off >>> 8}.${off & 255}`;
      if (!taken.has(ip)) {
        found = ip;
        break;
      }
    }
    if (found === undefined) break;
    taken.add(found);
    n++;
  }
  return [n, performance.now() - t0];
}

/** Fills through the pure nextFree function with an AddressSet as the taken set. */
function pureFill(subnet, strategy) {
  const rangeSet = new RangeSet([{ subnet }]).canonicalize();
  const taken = new AddressSet();
  gc();
  const t0 = performance.now();
  let n = 0;
  let cursor;
  try {
    for (;;) {
      cursor = nextFree({ rangeSet, taken, cursor, strategy });
      taken.add(cursor);
      n++;
    }
  } catch (err) {
    if (err.code !== "POOL_EXHAUSTED") throw err;
  }
  return [n, performance.now() - t0];
}

const fmt = (x, digits = 1) => x.toFixed(digits);

/**
 * Runs `measure` three times and keeps the median run (by time): the machine may be shared, and one
 * unlucky scheduling slice should not decide a figure either way.
 */
async function median3(measure) {
  const runs = [await measure(), await measure(), await measure()];
  runs.sort((a, b) => a[1] - b[1]);
  return runs[1];
}

/** 100,000 allocations in an IPv6 /64; returns [milliseconds, heap bytes per allocation]. */
async function ipv6Fill() {
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const store = new MemoryStore();
  const allocator = new IpAllocator(new RangeSet([{ subnet: "2001:db8:1::/64" }]), store, 0);
  const t0 = performance.now();
  for (let i = 0; i < 100_000; i++) await allocator.get(`pod-${i}`);
  const ms = performance.now() - t0;
  gc();
  const bytes = (process.memoryUsage().heapUsed - heapBefore) / 100_000;
  // Reading the store after the measurement keeps it (and all it holds) alive until then.
  if ((await store.reserved()).size !== 100_000n) throw new Error("the IPv6 store lost allocations");
  return [ms, bytes];
}

console.log(
  `      machine: ${availableParallelism()} CPUs, load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")} (figures are wall-clock; other load lowers them)`,
);

// Warm up the JIT on every measured path (twice, so the IPv6 run's deoptimisations settle too) so
// that no figure includes compilation.
for (let round = 0; round < 2; round++) {
  await fill("192.168.0.0/16", "lowest-free");
  await fill("192.168.0.0/16", "round-robin");
  await fill("192.168.0.0/18", "round-robin", Infinity, asyncOnly);
  await fill("fd00::/64", "round-robin", 20_000);
  pureFill("192.168.0.0/18", "lowest-free");
}

// 1. lowest-free fill of a /18 against the naive scan (run once: it takes many seconds).
const [oursN, oursMs] = await median3(() => fill("10.64.0.0/18", "lowest-free"));
const [naiveN, naiveMs] = naiveLowestFreeFill([10, 64], 14);
if (oursN !== naiveN) throw new Error(`fill counts differ: ours ${oursN}, naive ${naiveN}`);
console.log(
  `      /18 lowest-free fill, ${oursN} allocations: ours ${fmt(oursMs)} ms, naive scan ${fmt(naiveMs)} ms`,
);
report(
  "speed-up over the naive lowest-free scan (/18)",
  fmt(naiveMs / oursMs),
  "x",
  ">= 20x",
  naiveMs / oursMs >= 20,
);

// 2. per-allocation cost does not grow with the pool: /16 against /20.
const [n20, ms20] = await median3(() => fill("10.32.0.0/20", "lowest-free"));
const [n16, ms16] = await median3(() => fill("10.16.0.0/16", "lowest-free"));
const per20 = (ms20 * 1000) / n20;
const per16 = (ms16 * 1000) / n16;
console.log(
  `      lowest-free per allocation: /20 ${fmt(per20, 2)} us (${n20}), /16 ${fmt(per16, 2)} us (${n16})`,
);
report("per-allocation cost /16 over /20", fmt(per16 / per20, 2), "x", "<= 3x", per16 / per20 <= 3);

// 3. round-robin throughput on a /16.
const [rrN, rrMs] = await median3(() => fill("10.0.0.0/16", "round-robin"));
const rrRate = (rrN / rrMs) * 1000;
const rate = (x) => Math.round(x).toLocaleString("en");
report(
  `round-robin /16 (${rrN} allocations)`,
  rate(rrRate),
  "allocations/s",
  ">= 250,000",
  rrRate >= 250_000,
);

// For comparison only: the same fill when every store call is a promise round trip.
const [asyncN, asyncMs] = await median3(() => fill("10.0.0.0/16", "round-robin", Infinity, asyncOnly));
console.log(
  `      (round-robin /16 through async-only store calls: ${rate((asyncN / asyncMs) * 1000)} allocations/s)`,
);

// 4. 100,000 allocations in an IPv6 /64: time, and heap per allocation (the store's contents).
const [v6Ms, bytesPer] = await median3(ipv6Fill);
report("100,000 allocations in an IPv6 /64", fmt(v6Ms), "ms", "< 1500 ms", v6Ms < 1500);
report(
  "heap used per IPv6 allocation (store included)",
  fmt(bytesPer, 0),
  "bytes",
  "<= 1024 bytes",
  bytesPer <= 1024,
);

// The pure path the pool resources use for planning (no store, no promises).
const [pureN, pureMs] = await median3(async () => pureFill("10.8.0.0/16", "lowest-free"));
const pureRate = (pureN / pureMs) * 1000;
report(
  `pure nextFree lowest-free /16 (${pureN} plans)`,
  rate(pureRate),
  "plans/s",
  ">= 250,000",
  pureRate >= 250_000,
);

process.exit(failures === 0 ? 0 : 1);
