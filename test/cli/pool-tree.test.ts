import { describe, expect, it } from "vitest";
import { blockHolder } from "../../provider/cli/holder";
import { linkPools, treeDepths, type PoolNode } from "../../provider/cli/pool-tree";

/** A pool node: `name`, its ranges as `start-end`, and the blocks held in it. */
const node = (name: string, ranges: string[], blocks: string[] = []): PoolNode => ({
  pool: `urn:${name}`,
  name,
  ranges: ranges.map((r) => {
    const [rangeStart, rangeEnd] = r.split("-");
    return { rangeStart: rangeStart!, rangeEnd: rangeEnd! };
  }),
  blocks: blocks.map((ip) => blockHolder({ ip, owner: `urn:block:${ip}`, state: "held" })),
});

/** The tree as `name@depth<parent's block` lines, in the order the report shows it. */
const shape = (nodes: PoolNode[]) => {
  const ordered = linkPools(nodes);
  const depths = treeDepths(ordered);
  return ordered.map(
    (n, i) => `${n.name}@${depths[i]}${n.parent ? `<${n.parent.name} ${n.parent.block}` : ""}`,
  );
};

describe("linkPools", () => {
  it.each<[string, PoolNode[], string[]]>([
    [
      "pools made of no block keep their order",
      [node("a", ["10.0.0.1-10.0.0.254"]), node("b", ["10.1.0.1-10.1.0.254"])],
      ["a@0", "b@0"],
    ],
    [
      "a child right after its parent, under the block, children by block",
      [
        node("dev", ["10.1.0.1-10.1.255.254"], ["10.1.0.0/24"]),
        node("prod", ["10.0.0.1-10.0.255.254"]),
        node("root", ["10.0.0.1-10.255.255.254"], ["10.0.0.0/16", "10.1.0.0/16"]),
      ],
      ["root@0", "prod@1<root 10.0.0.0/16", "dev@1<root 10.1.0.0/16"],
    ],
    [
      "the smallest block around a pool is its parent (a grandchild under its own parent)",
      [
        node("root", ["10.0.0.1-10.255.255.254"], ["10.0.0.0/16"]),
        node("prod", ["10.0.0.1-10.0.255.254"], ["10.0.3.0/24"]),
        node("zone", ["10.0.3.1-10.0.3.254"]),
      ],
      ["root@0", "prod@1<root 10.0.0.0/16", "zone@2<prod 10.0.3.0/24"],
    ],
    [
      "a pool with a range outside the block is no child of it",
      [node("root", ["10.0.0.1-10.0.255.254"], ["10.0.0.0/24"]), node("wide", ["10.0.0.10-10.0.1.20"])],
      ["root@0", "wide@0"],
    ],
    [
      "a dual-stack pool is a child only of a block around every range (none: another family)",
      [
        node("v6", ["2001:db8::1-2001:db8::ffff"], ["2001:db8::/64"]),
        node("dual", ["10.0.0.1-10.0.0.9", "2001:db8::1-2001:db8::9"]),
      ],
      ["v6@0", "dual@0"],
    ],
    [
      "an IPv6 child of a /64",
      [
        node("v6", ["2001:db8::1-2001:db8:0:ffff:ffff:ffff:ffff:ffff"], ["2001:db8::/64"]),
        node("mesh", ["2001:db8::1-2001:db8::ffff:ffff:ffff:ffff"]),
      ],
      ["v6@0", "mesh@1<v6 2001:db8::/64"],
    ],
    [
      "two pools each inside the other's block: the loop is cut, the first one found is the root",
      [
        node("a", ["10.0.0.1-10.0.0.254"], ["10.0.0.0/24"]),
        node("b", ["10.0.0.1-10.0.0.254"], ["10.0.0.0/24"]),
      ],
      ["a@0", "b@1<a 10.0.0.0/24"],
    ],
  ])("%s", (_what, nodes, expected) => {
    expect(shape(nodes)).toEqual(expected);
  });

  it("lists each child in its block's pools", () => {
    const root = node("root", ["10.0.0.1-10.255.255.254"], ["10.0.0.0/16"]);
    linkPools([root, node("prod", ["10.0.0.1-10.0.255.254"]), node("prod-2", ["10.0.128.1-10.0.128.9"])]);
    expect(root.blocks[0]!.pools).toEqual([
      { pool: "urn:prod", name: "prod" },
      { pool: "urn:prod-2", name: "prod-2" },
    ]);
  });

  it("gives a child whose parent pool is not in the list depth 0", () => {
    const nodes = linkPools([
      node("root", ["10.0.0.1-10.255.255.254"], ["10.0.0.0/16"]),
      node("prod", ["10.0.0.1-10.0.255.254"]),
    ]);
    expect(treeDepths(nodes.filter((n) => n.name === "prod"))).toEqual([0]);
  });
});
