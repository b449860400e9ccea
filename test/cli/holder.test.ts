import { describe, expect, it } from "vitest";
import { blockHolder, compareEntries, splitHolders, type Holder } from "../../provider/cli/holder";

describe("compareEntries", () => {
  it.each<[string, string, number]>([
    ["10.0.0.1", "10.0.0.2", -1],
    ["10.0.1.0/24", "10.0.0.200", 1],
    ["10.0.0.0/16", "10.0.0.0/24", -1],
    ["10.0.0.0/24", "10.0.0.0", -1],
    ["10.0.0.0/24", "10.0.0.0/24", 0],
    ["2001:db8::/64", "10.255.255.255", 1],
    ["2001:db8::/64", "2001:db8:0:1::", -1],
  ])("%s vs %s: %i", (a, b, order) => {
    expect(Math.sign(compareEntries(a, b))).toBe(order);
    expect(Math.sign(compareEntries(b, a))).toBe(-order || 0);
  });
});

describe("splitHolders", () => {
  const h = (ip: string): Holder => ({ ip, owner: `urn:${ip}`, state: "held" });

  it("keeps addresses as holders and gives blocks their cidr, prefix length and size", () => {
    const { holders, blocks } = splitHolders([h("10.0.0.0/16"), h("10.2.0.0"), h("2001:db8::/64")]);
    expect(holders.map((x) => x.ip)).toEqual(["10.2.0.0"]);
    expect(blocks.map((b) => [b.cidr, b.prefixLength, b.size])).toEqual([
      ["10.0.0.0/16", 16, "65536"],
      ["2001:db8::/64", 64, "18446744073709551616"],
    ]);
  });

  it("refuses a block that is not its own network address", () => {
    expect(() => blockHolder(h("10.0.0.1/24"))).toThrow(/not a network address/);
  });
});
