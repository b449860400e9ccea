import { describe, expect, it } from "vitest";
import { parseAddress } from "../../provider/allocator/address";
import { exclusionSet } from "../../provider/allocator/exclusions";
import { IntervalSet } from "../../provider/allocator/interval-set";
import { mapSubnet, type CellState, type MapLayers, type MapRow } from "../../provider/cli/address-map";

interface Spec {
  range: [string, string];
  gateway: string;
  held?: string[];
  planned?: string[];
  reserved?: string[];
  exclude?: string[];
}

const v = (ip: string) => parseAddress(ip).value;
const values = (ips: string[] = []) => new IntervalSet(ips.map((ip) => [v(ip), v(ip)] as const));

function layers(spec: Spec): MapLayers {
  const family = parseAddress(spec.gateway).family;
  return {
    held: values(spec.held),
    planned: values(spec.planned),
    reserved: values(spec.reserved),
    gateway: values([spec.gateway]),
    excluded: exclusionSet(family, spec.exclude),
    inRange: new IntervalSet([[v(spec.range[0]), v(spec.range[1])]]),
  };
}

const rows = (lines: ReturnType<typeof mapSubnet>["lines"]) =>
  lines.filter((l): l is MapRow => l.kind === "row");
const count = (lines: ReturnType<typeof mapSubnet>["lines"], state: CellState) =>
  rows(lines).reduce((n, r) => n + r.cells.filter((c) => c === state).length, 0);

describe("mapSubnet", () => {
  const slash24: Spec = {
    range: ["10.0.8.1", "10.0.8.254"],
    gateway: "10.0.8.1",
    held: ["10.0.8.10", "10.0.8.11"],
    planned: ["10.0.8.12"],
    reserved: ["10.0.8.50"],
    exclude: ["10.0.8.64/28"],
  };

  it.each<[string, Spec, string, Partial<Record<CellState, number>>, number]>([
    [
      "a /24 address by address, every row drawn",
      slash24,
      "10.0.8.0/24",
      { held: 2, planned: 1, reserved: 1, gateway: 1, excluded: 16, outside: 2, free: 233 },
      4,
    ],
    [
      "a gateway outside the range and addresses before rangeStart",
      { range: ["10.0.8.10", "10.0.8.254"], gateway: "10.0.8.1", held: ["10.0.8.10"] },
      "10.0.8.0/24",
      { held: 1, gateway: 1, outside: 10, free: 244 },
      4,
    ],
    [
      "a held address wins over an exclusion covering it",
      {
        range: ["10.0.8.1", "10.0.8.254"],
        gateway: "10.0.8.1",
        held: ["10.0.8.70"],
        exclude: ["10.0.8.64/28"],
      },
      "10.0.8.0/24",
      { held: 1, excluded: 15 },
      4,
    ],
  ])("%s", (_name, spec, subnet, expected, rowCount) => {
    const map = mapSubnet(subnet, layers(spec));
    expect(map.blockSize).toBe("1");
    expect(rows(map.lines)).toHaveLength(rowCount);
    for (const [state, n] of Object.entries(expected)) expect(count(map.lines, state as CellState)).toBe(n);
    expect(rows(map.lines).reduce((n, r) => n + r.cells.length, 0)).toBe(256);
  });

  it("draws the telling rows of a /16 and folds the uniform ones into gaps", () => {
    const map = mapSubnet(
      "10.64.0.0/16",
      layers({
        range: ["10.64.0.1", "10.64.255.254"],
        gateway: "10.64.0.1",
        held: ["10.64.0.2", "10.64.0.3"],
        exclude: ["10.64.128.0/20"],
      }),
    );
    expect(map.blockSize).toBe("1");
    const gapOf = (first: string, last: string, free: string, excluded: string, outside: string) => ({
      kind: "gap",
      first,
      last,
      free,
      excluded,
      outside,
    });
    expect(map.lines.map((l) => (l.kind === "row" ? l.first : l))).toEqual([
      "10.64.0.0", // the gateway, the holders and where the range begins
      gapOf("10.64.0.64", "10.64.127.255", "32704", "0", "0"),
      "10.64.128.0", // where the exclusion begins
      gapOf("10.64.128.64", "10.64.143.191", "0", "3968", "0"),
      "10.64.143.192", // where it ends
      gapOf("10.64.144.0", "10.64.255.191", "28608", "0", "0"),
      "10.64.255.192", // where the range ends, before the broadcast address
    ]);
    expect(rows(map.lines).at(-1)!.cells.slice(-2)).toEqual(["free", "outside"]);
  });

  it("draws an IPv6 /64 from its occupied blocks without enumerating it", () => {
    const map = mapSubnet(
      "2001:db8::/64",
      layers({
        range: ["2001:db8::1", "2001:db8::ffff:ffff:ffff:ffff"],
        gateway: "2001:db8::1",
        held: ["2001:db8::2", "2001:db8::3"],
      }),
    );
    expect(map.blockSize).toBe("1");
    expect(count(map.lines, "held")).toBe(2);
    expect(map.lines).toHaveLength(2);
    expect(map.lines[1]).toMatchObject({ kind: "gap", free: ((1n << 64n) - 64n).toString(), outside: "0" });
  });

  it("grows the blocks of a /64 with spread holders until the occupied rows fit, keeping every holder in a held cell", () => {
    const held = Array.from({ length: 40 }, (_, i) => `2001:db8::${(i * 0x0633).toString(16)}:0:0:${i + 2}`);
    const spec = {
      range: ["2001:db8::1", "2001:db8::ffff:ffff:ffff:ffff"] as [string, string],
      gateway: "2001:db8::1",
      held,
    };
    const map = mapSubnet("2001:db8::/64", layers(spec), { columns: 64, maxRows: 16 });
    const block = BigInt(map.blockSize);
    expect(block).toBeGreaterThan(1n);
    expect(block & (block - 1n)).toBe(0n);
    expect(rows(map.lines).length).toBeLessThanOrEqual(16);
    const heldCells = rows(map.lines).flatMap((r) =>
      r.cells.flatMap((c, i) => (c === "held" ? [v(r.first) + BigInt(i) * block] : [])),
    );
    for (const ip of held)
      expect(heldCells.some((first) => v(ip) >= first && v(ip) < first + block)).toBe(true);
    expect(heldCells.length).toBeLessThanOrEqual(held.length);
  });
});
