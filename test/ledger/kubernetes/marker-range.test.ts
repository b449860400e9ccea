// Which markers an entry registers in, which blocks a pool allows, and the coalesced fresh read.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { entriesOverlap, entrySpan } from "../../../provider/ledger/held-entry";
import {
  ancestorsOf,
  blockRefusal,
  covers,
  hull,
  markerRuleOf,
  nextRead,
  parseRange,
  type MarkerRule,
} from "../../../provider/ledger/kubernetes/marker-range";
import { formatPrefix, hostMask } from "../../../provider/allocator/prefix";

const r = (min: number, max: number) => ({ min, max });

describe("ancestorsOf", () => {
  it.each([
    ["10.20.3.64/26", r(24, 27), ["10.20.3.0/24", "10.20.3.0/25"]],
    ["10.20.3.96/27", r(24, 27), ["10.20.3.0/24", "10.20.3.0/25", "10.20.3.64/26"]],
    ["10.20.3.0/24", r(24, 27), []], // the widest length registers nowhere
    ["10.20.2.0/23", r(24, 27), []], // wider than the markers: none around it
    ["10.20.3.77", r(24, 27), ["10.20.3.0/24", "10.20.3.0/25", "10.20.3.64/26", "10.20.3.64/27"]],
    ["10.0.0.5", r(30, 32), ["10.0.0.4/30", "10.0.0.4/31", "10.0.0.5/32"]], // an address meets the /32 block
    ["10.0.0.4/31", r(30, 32), ["10.0.0.4/30"]],
    ["fd00::1:0/112", r(96, 112), ["fd00::/96", ...Array.from({ length: 15 }, (_, i) => `fd00::/${97 + i}`)]],
    ["10.20.3.77", undefined, []], // no marker range: no markers at all
  ])("%s at %j → %j", (entry, range, blocks) => {
    expect(ancestorsOf(entry, range)).toEqual(blocks);
  });

  it("two entries overlap exactly when they are one entry or one is registered at the other's name", () => {
    const range = r(20, 28);
    const entry = fc
      .tuple(fc.bigInt(0x0a000000n, 0x0a000fffn), fc.oneof(fc.integer({ min: 20, max: 28 }), fc.constant(32)))
      .map(([v, length]) =>
        length === 32
          ? formatPrefix(4, v, 32).split("/")[0]!
          : formatPrefix(4, v & ~hostMask(4, length), length),
      );
    fc.assert(
      fc.property(entry, entry, (a, b) => {
        const meet = a === b || ancestorsOf(a, range).includes(b) || ancestorsOf(b, range).includes(a);
        expect(meet).toBe(entriesOverlap(entrySpan(a), entrySpan(b)));
      }),
    );
  });
});

describe("ranges", () => {
  it.each([
    ["24-27", r(24, 27)],
    ["27-24", undefined],
    ["24", undefined],
    [undefined, undefined],
  ])("parseRange(%j) → %j", (text, range) => expect(parseRange(text)).toEqual(range));

  it("grows, never shrinks", () => {
    expect(hull(r(24, 27), r(20, 25))).toEqual(r(20, 27));
    expect(hull(undefined, r(24, 27))).toEqual(r(24, 27));
    expect(covers(r(20, 27), r(24, 27))).toBe(true);
    expect(covers(r(25, 27), r(24, 27))).toBe(false);
    expect(covers(undefined, r(24, 27))).toBe(false);
  });

  it("reads the rule and the ranges from the definition object's data", () => {
    const definition = JSON.stringify({ ranges: [], prefixLengths: { min: 24, max: 27, default: 26 } });
    expect(markerRuleOf({ definition, markers: "22-27", markersReady: "24-27" })).toEqual({
      rule: { min: 24, max: 27, default: 26 },
      markers: r(22, 27),
      ready: r(24, 27),
    });
    expect(markerRuleOf({ definition: "{}", markersReady: "24-27" })).toEqual({}); // ready without markers: none
    expect(markerRuleOf(undefined)).toEqual({});
  });
});

describe("blockRefusal", () => {
  const what = 'pool "blocks" (namespace "ipam")';
  const ready: MarkerRule = { rule: { min: 24, max: 27 }, markers: r(24, 27), ready: r(24, 27) };
  it.each([
    ["10.0.0.0/26", ready, undefined],
    ["10.0.0.0/28", ready, /outside the pool's rule prefixLengths \/24 to \/27/],
    ["10.0.0.0/23", ready, /outside the pool's rule/],
    [
      "10.0.0.0/26",
      { rule: { min: 24 } },
      /need the pool's rule with both ends, prefixLengths: \{ min, max \}/,
    ],
    ["10.0.0.0/26", {}, /pool "blocks" \(namespace "ipam"\).*set both on the IpPool/],
    ["10.0.0.0/26", { ...ready, ready: r(24, 25) }, /still being written/],
    ["10.0.0.0/26", { ...ready, ready: undefined }, /still being written/],
  ])("%s under %j", (block, rule, why) => {
    const refused = blockRefusal(block, rule, what);
    if (why === undefined) expect(refused).toBeUndefined();
    else {
      expect(refused?.code).toBe("PREFIX_NOT_ALLOWED");
      expect(refused?.message).toMatch(why);
      expect(refused?.message).toContain(block);
    }
  });
});

describe("nextRead", () => {
  it("gives every call a read that started after it, shared by the calls that wait together", async () => {
    let started = 0;
    const gates: (() => void)[] = [];
    const read = nextRead(() => {
      const n = ++started;
      return new Promise<number>((resolve) => gates.push(() => resolve(n)));
    });
    const a = read(); // starts read 1
    const b = read(); // read 1 started before it: waits for read 2
    const c = read(); // shares read 2
    expect(started).toBe(1);
    gates.shift()!();
    expect(await a).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toBe(2);
    gates.shift()!();
    expect([await b, await c]).toEqual([2, 2]);
    const d = read(); // nothing runs: a read of its own
    gates.shift()!();
    expect(await d).toBe(3);
  });
});
