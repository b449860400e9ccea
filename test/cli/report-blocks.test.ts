import { describe, expect, it } from "vitest";
import { poolUsages, type SharedView } from "../../provider/cli/pool-usage";
import { report, stackUsages } from "../../provider/cli/report-command";
import { poolsSvg } from "../../provider/cli/report-svg";
import { styleFor } from "../../provider/cli/style";
import type { StackSnapshot } from "../../provider/cli/stack-snapshot";
import { blocksStack, holderResource, poolResource, urnOf } from "./fixtures/blocks-stack";

const plain = styleFor({ isTTY: false }, {});
const scope = { kind: "stack" as const, name: blocksStack.stack };
const textOf = (snapshot: StackSnapshot = blocksStack, pool?: string) =>
  report({ ...scope, name: snapshot.stack }, stackUsages(snapshot, pool), {}, plain).split("\n");
const since = "#1 (update, 2026-01-02 10:00:05 UTC)";
const blockUrn = (name: string) => urnOf("PrefixAllocation", name);

describe("report of a stack holding blocks", () => {
  const lines = textOf();

  it.each<[string, string]>([
    ["the root pool's rule for blocks", "  blocks    /16 to /24, default /16"],
    // 2^24 - 2 range addresses less the gateway; two /16s and an address held; free as the pool's
    // `free` after refresh: the range's addresses nothing holds (a block's network address and the
    // gateway in it are no range address to count).
    [
      "counts with every address of a block",
      "  size 16777213  held 131073  free 16646142  planned-not-created 0  reserved 0  excluded 0",
    ],
    [
      "a block's first row",
      "  10.0.0.0        ################ ################ ################ ################",
    ],
    ["its inside as one gap", "  ... 10.0.0.64 - 10.0.255.191: 65408 held"],
    [
      "its last row, before the next block's first",
      "  10.0.255.192    ################ ################ ################ ################",
    ],
    [
      "the address after the blocks",
      "  10.2.0.0        #............... ................ ................ ................",
    ],
    ["the free rest of the /8", "  ... 10.2.0.64 - 10.255.255.191: 16646016 free"],
    [
      "the address holders' table, addresses only",
      `  10.2.0.0  held   ${since}  ${urnOf("IpAllocation", "vip")}`,
    ],
    ["the blocks' table", `  BLOCK        SIZE   STATE  SINCE                                 HOLDER (URN)`],
    ["a line per block with its size", `  10.0.0.0/16  65536  held   ${since}  ${blockUrn("prod")}`],
    ["a child pool indented under its parent", `    pool prod-subnets  ${urnOf("IpPool", "prod-subnets")}`],
    ["the block it is made of", "      in block  10.0.0.0/16 of pool root"],
    ["its range, the block's", "      range     10.0.0.1-10.0.255.254 in 10.0.0.0/16, gateway 10.0.0.1"],
    ["its counts", "      size 65533  held 512  free 65023  planned-not-created 0  reserved 0  excluded 0"],
    ["its holders, one level down", `      10.0.1.0/24  256   held   ${since}  ${blockUrn("prod-b")}`],
    [
      "an IPv6 /64 in a /48",
      `  2001:db8::/64      18446744073709551616  held   ${since}  ${blockUrn("v6a")}`,
    ],
    [
      "the inside of an IPv6 /64 as one gap, never enumerated",
      "  ... 2001:db8::40 - 2001:db8::ffff:ffff:ffff:ffbf: 18446744073709551488 held",
    ],
    [
      "where the next /64 begins",
      "  2001:db8:0:1::                    ################ ################ ################ ################",
    ],
    [
      "the IPv6 pool's counts",
      "  size 1208925819614629174706174  held 36893488147419103232  free 1208888926126481755602944  planned-not-created 0  reserved 0  excluded 0",
    ],
  ])("shows %s", (_what, line) => {
    expect(lines).toContain(line);
  });

  it("lays the pools out as a tree: parent pool, its blocks, the pools made of them, theirs", () => {
    const headings = lines.filter((l) => /^ *(pool |BLOCK|ADDRESS|holders:| {2}in block)/.test(l));
    expect(headings.map((l) => l.replace(/ {2}urn:\S+$/, "").trimEnd())).toEqual([
      "pool root",
      "  ADDRESS   STATE  SINCE                                 HOLDER (URN)",
      "  BLOCK        SIZE   STATE  SINCE                                 HOLDER (URN)",
      "    pool prod-subnets",
      "      in block  10.0.0.0/16 of pool root",
      "      BLOCK        SIZE  STATE  SINCE                                 HOLDER (URN)",
      "    pool dev-subnets",
      "      in block  10.1.0.0/16 of pool root",
      "      BLOCK        SIZE  STATE  SINCE                                 HOLDER (URN)",
      "pool v6",
      "  BLOCK              SIZE                  STATE  SINCE                                 HOLDER (URN)",
    ]);
  });

  it("keeps a selected child pool's parent and shows it unindented", () => {
    const only = textOf(blocksStack, "prod-subnets");
    expect(only.slice(0, 2)).toEqual([
      `pool prod-subnets  ${urnOf("IpPool", "prod-subnets")}`,
      "  in block  10.0.0.0/16 of pool root",
    ]);
    expect(only.filter((l) => l.startsWith("pool "))).toHaveLength(1);
  });

  it("names the stack's pools by name, not in tree order, when --pool matches none", () => {
    expect(() => stackUsages(blocksStack, "nope")).toThrow(
      /has no pool named "nope"; its pools: dev-subnets, prod-subnets, root, v6$/,
    );
  });

  it("--json adds blocks (cidr, prefixLength, size, the pools made of them) and each child's parent, in tree order", () => {
    const doc = JSON.parse(report(scope, stackUsages(blocksStack), { json: true }, plain));
    expect(doc.pools.map((p: { name: string }) => p.name)).toEqual([
      "root",
      "prod-subnets",
      "dev-subnets",
      "v6",
    ]);
    const [root, prod] = doc.pools;
    expect(root).toMatchObject({ size: "16777213", held: "131073", free: "16646142", planned: "0" });
    expect(root.prefixLengths).toEqual({ min: 16, max: 24, default: 16 });
    expect(root.holders).toEqual([
      {
        ip: "10.2.0.0",
        owner: urnOf("IpAllocation", "vip"),
        state: "held",
        sinceVersion: 1,
        sinceKind: "update",
        sinceTime: "2026-01-02T10:00:05Z",
      },
    ]);
    expect(
      root.blocks.map((b: Record<string, unknown>) => [b.cidr, b.prefixLength, b.size, b.owner, b.pools]),
    ).toEqual([
      [
        "10.0.0.0/16",
        16,
        "65536",
        blockUrn("prod"),
        [{ pool: urnOf("IpPool", "prod-subnets"), name: "prod-subnets" }],
      ],
      [
        "10.1.0.0/16",
        16,
        "65536",
        blockUrn("dev"),
        [{ pool: urnOf("IpPool", "dev-subnets"), name: "dev-subnets" }],
      ],
    ]);
    expect(root.parent).toBeUndefined();
    expect(prod.parent).toEqual({
      pool: urnOf("IpPool", "root"),
      name: "root",
      block: "10.0.0.0/16",
      owner: blockUrn("prod"),
    });
    expect(prod.blocks[0]).toMatchObject({
      cidr: "10.0.0.0/24",
      prefixLength: 24,
      size: "256",
      state: "held",
    });
    expect(prod.blocks[0].pools).toBeUndefined();
    expect(root.maps[0].lines[1]).toEqual({
      kind: "gap",
      first: "10.0.0.64",
      last: "10.0.255.191",
      free: "0",
      excluded: "0",
      outside: "0",
      held: "65408",
    });
  });

  it("counts an interrupted block create as planned, its inside as a planned gap, and a copy pending deletion as held", () => {
    const planned = holderResource("PrefixAllocation", "staging", "root", "10.3.0.0/16");
    const snapshot: StackSnapshot = {
      ...blocksStack,
      resources: [
        ...blocksStack.resources,
        { ...holderResource("PrefixAllocation", "old", "root", "10.4.0.0/24"), delete: true },
      ],
      pendingCreates: [{ ...planned, outputs: undefined, inputs: planned.outputs }],
    };
    const [root] = poolUsages(snapshot);
    expect(root).toMatchObject({ held: String(131073 + 256), planned: "65536" });
    expect(root!.free).toBe(String(16646142 - 65536 - 256));
    expect(root!.blocks.map((b) => [b.cidr, b.state])).toEqual([
      ["10.0.0.0/16", "held"],
      ["10.1.0.0/16", "held"],
      ["10.3.0.0/16", "planned"],
      ["10.4.0.0/24", "deleting"],
    ]);
    expect(textOf(snapshot)).toContain("  ... 10.3.0.64 - 10.3.255.191: 65408 planned, not created");
  });

  it("shows another stack's block of a shared pool with its stack, and no holders line for a pool of blocks only", () => {
    const snapshot: StackSnapshot = {
      ...blocksStack,
      resources: [
        poolResource("shared", "10.9.0.0/16"),
        holderResource("PrefixAllocation", "mine", "shared", "10.9.0.0/24"),
      ],
    };
    const other = {
      ip: "10.9.1.0/24",
      owner: "urn:pulumi:test::other::x:PrefixAllocation::theirs",
      stack: "o/other/test",
      state: "held" as const,
    };
    const shared = new Map<string, SharedView>([[urnOf("IpPool", "shared"), { holders: [other], own: [] }]]);
    const text = report(scope, poolUsages(snapshot, undefined, undefined, shared), {}, plain).split("\n");
    expect(text).toContain(
      "  BLOCK        SIZE  STATE  SINCE                                 STACK         HOLDER (URN)",
    );
    expect(text).toContain(
      `  10.9.1.0/24  256   held   -                                     o/other/test  ${other.owner}`,
    );
    expect(text.some((l) => l.includes("holders: none"))).toBe(false);
  });

  it("--svg names a child's block and gives a cell inside a block its holder as tooltip", () => {
    const svg = poolsSvg("stack s", stackUsages(blocksStack, "prod-subnets"));
    expect(svg).toContain('<text class="parent" x="0" y="56">in block 10.0.0.0/16 of pool root</text>');
    expect(svg).toMatch(
      new RegExp(
        `data-first="10\\.0\\.0\\.5"[^>]*><title>10\\.0\\.0\\.5 in block 10\\.0\\.0\\.0/24, held by ${blockUrn("prod-a")}</title>`,
      ),
    );
  });
});
