import { describe, expect, it } from "vitest";
import { parseAddress } from "../../provider/allocator/address";
import { IntervalSet } from "../../provider/allocator/interval-set";
import { mapSubnet, type MapGap, type MapLayers } from "../../provider/cli/address-map";
import { entrySpan } from "../../provider/ledger/held-entry";

const v = (ip: string) => parseAddress(ip).value;
const spans = (entries: string[]) => entries.map((e) => entrySpan(e)).map((s) => [s.start, s.end] as const);

/** Layers of one range with held and planned entries (addresses or blocks). */
function layers(range: [string, string], held: string[], planned: string[] = []): MapLayers {
  const blocks = [...held, ...planned].filter((e) => e.includes("/"));
  return {
    held: new IntervalSet(spans(held)),
    planned: new IntervalSet(spans(planned)),
    reserved: new IntervalSet(),
    gateway: new IntervalSet([[v(range[0]), v(range[0])]]),
    excluded: new IntervalSet(),
    inRange: new IntervalSet([[v(range[0]), v(range[1])]]),
    blocks: spans(blocks),
  };
}

/** Each line as `row <first>` or `gap <first>-<last> <counts>`. */
const outline = (lines: ReturnType<typeof mapSubnet>["lines"]) =>
  lines.map((l) =>
    l.kind === "row"
      ? `row ${l.first}`
      : `gap ${l.first}-${l.last} ${Object.entries(l as MapGap)
          .filter(([k, n]) => !["kind", "first", "last"].includes(k) && n !== "0")
          .map(([k, n]) => `${n} ${k}`)
          .join(", ")}`,
  );

describe("mapSubnet with blocks", () => {
  it.each<[string, string, MapLayers, string[]]>([
    [
      "a /8 with two /16s side by side: each block's first and last rows, its inside one gap",
      "10.0.0.0/8",
      layers(["10.0.0.1", "10.255.255.254"], ["10.0.0.0/16", "10.1.0.0/16", "10.2.0.0"]),
      [
        "row 10.0.0.0",
        "gap 10.0.0.64-10.0.255.191 65408 held",
        "row 10.0.255.192",
        "row 10.1.0.0",
        "gap 10.1.0.64-10.1.255.191 65408 held",
        "row 10.1.255.192",
        "row 10.2.0.0",
        "gap 10.2.0.64-10.255.255.191 16646016 free",
        "row 10.255.255.192",
      ],
    ],
    [
      "an IPv6 /48 with a /64, never enumerated",
      "2001:db8::/48",
      layers(["2001:db8::1", "2001:db8:0:ffff:ffff:ffff:ffff:ffff"], ["2001:db8:0:5::/64"]),
      [
        "row 2001:db8::",
        "gap 2001:db8::40-2001:db8:0:4:ffff:ffff:ffff:ffff 92233720368547758016 free",
        "row 2001:db8:0:5::",
        "gap 2001:db8:0:5::40-2001:db8:0:5:ffff:ffff:ffff:ffbf 18446744073709551488 held",
        "row 2001:db8:0:5:ffff:ffff:ffff:ffc0",
        "gap 2001:db8:0:6::-2001:db8:0:ffff:ffff:ffff:ffff:ffff 1208815139150186917396480 free",
      ],
    ],
    [
      "a planned block's inside is a planned gap",
      "10.0.0.0/16",
      layers(["10.0.0.1", "10.0.255.254"], [], ["10.0.4.0/22"]),
      [
        "row 10.0.0.0",
        "gap 10.0.0.64-10.0.3.255 960 free",
        "row 10.0.4.0",
        "gap 10.0.4.64-10.0.7.191 896 planned",
        "row 10.0.7.192",
        "gap 10.0.8.0-10.0.255.191 63424 free",
        "row 10.0.255.192",
      ],
    ],
    [
      "a held address next to a block keeps its own row",
      "10.0.0.0/16",
      layers(["10.0.0.1", "10.0.255.254"], ["10.0.4.0/24", "10.0.5.0"]),
      [
        "row 10.0.0.0",
        "gap 10.0.0.64-10.0.3.255 960 free",
        "row 10.0.4.0",
        "gap 10.0.4.64-10.0.4.191 128 held",
        "row 10.0.4.192",
        "row 10.0.5.0",
        "gap 10.0.5.64-10.0.255.191 64128 free",
        "row 10.0.255.192",
      ],
    ],
  ])("%s", (_what, subnet, l, expected) => {
    const map = mapSubnet(subnet, l);
    expect(map.blockSize).toBe("1");
    expect(outline(map.lines)).toEqual(expected);
  });

  it("marks every cell of a block held, the network address and gateway inside it too", () => {
    const map = mapSubnet("10.0.0.0/24", layers(["10.0.0.1", "10.0.0.254"], ["10.0.0.0/26"]));
    const first = map.lines[0]!;
    expect(first.kind === "row" && first.cells.every((c) => c === "held")).toBe(true);
  });

  it("grows the cells when blocks are too many for 16 rows, each block still in a held cell", () => {
    const held = Array.from({ length: 40 }, (_, i) => `10.${i * 6}.0.0/16`);
    const map = mapSubnet("10.0.0.0/8", layers(["10.0.0.1", "10.255.255.254"], held));
    expect(BigInt(map.blockSize)).toBeGreaterThan(1n);
    expect(map.lines.filter((l) => l.kind === "row").length).toBeLessThanOrEqual(16);
  });
});
