import { describe, expect, it } from "vitest";
import { Range, RangeSet } from "../../provider/allocator";

describe("RangeSet", () => {
  const set = new RangeSet([{ subnet: "192.168.0.0/24" }, new Range({ subnet: "172.16.1.0/24" })]);

  it("detects membership and finds the holding range", () => {
    set.canonicalize();
    expect(set.contains("192.168.0.55")).toBe(true);
    expect(set.contains("172.16.1.254")).toBe(true);
    expect(set.contains("172.16.1.255")).toBe(false);
    expect(set.rangeFor("192.168.0.55")).toBe(set.ranges[0]);
    expect(set.rangeFor("::ffff:172.16.1.9")).toBe(set.ranges[1]);
  });

  it("names the address and the set when no range holds it", () => {
    expect(() => set.rangeFor("192.168.99.99")).toThrow(
      expect.objectContaining({
        code: "NOT_IN_RANGE",
        message: "192.168.99.99 is not in range set 192.168.0.1-192.168.0.254,172.16.1.1-172.16.1.254",
      }),
    );
  });

  it("prints its ranges joined by commas, and is iterable", () => {
    expect(set.toString()).toBe("192.168.0.1-192.168.0.254,172.16.1.1-172.16.1.254");
    expect([...set].map(String)).toEqual(["192.168.0.1-192.168.0.254", "172.16.1.1-172.16.1.254"]);
    expect(set.length).toBe(2);
  });

  it.each<[string, RangeSet, string, RegExp]>([
    ["an empty set", new RangeSet([]), "EMPTY_RANGE_SET", /no ranges/],
    [
      "overlapping ranges",
      new RangeSet([{ subnet: "192.168.0.0/20" }, { subnet: "192.168.2.0/24" }]),
      "OVERLAPPING_RANGES",
      /ranges 192\.168\.0\.1-192\.168\.15\.254 and 192\.168\.2\.1-192\.168\.2\.254 overlap/,
    ],
    [
      "overlap between the first and the last of three",
      new RangeSet([
        { subnet: "10.0.0.0/24", rangeEnd: "10.0.0.100" },
        { subnet: "10.9.0.0/24" },
        { subnet: "10.0.0.0/24", rangeStart: "10.0.0.100" },
      ]),
      "OVERLAPPING_RANGES",
      /10\.0\.0\.1-10\.0\.0\.100 and 10\.0\.0\.100-10\.0\.0\.254/,
    ],
    [
      "mixed families",
      new RangeSet([{ subnet: "10.1.0.0/22" }, { subnet: "2001:db8:5::/64" }]),
      "MIXED_FAMILIES",
      /10\.1\.0\.1-10\.1\.3\.254 is IPv4 but 2001:db8:5::1-.* is IPv6/,
    ],
    [
      "a bad range inside",
      new RangeSet([{ subnet: "10.0.0.0/24" }, { subnet: "10.0.1.3/24" }]),
      "HOST_BITS_SET",
      /10\.0\.1\.0/,
    ],
  ])("rejects %s", (_name, bad, code, message) => {
    expect(() => bad.canonicalize()).toThrow(
      expect.objectContaining({ code, message: expect.stringMatching(message) }),
    );
  });

  it("accepts ranges that share a subnet but not an address", () => {
    const halves = new RangeSet([
      { subnet: "10.0.0.0/24", rangeEnd: "10.0.0.127" },
      { subnet: "10.0.0.0/24", rangeStart: "10.0.0.128" },
    ]).canonicalize();
    expect(halves.toString()).toBe("10.0.0.1-10.0.0.127,10.0.0.128-10.0.0.254");
  });

  it.each<[string, string[], string[], boolean]>([
    ["a containing subnet", ["192.168.0.0/20"], ["192.168.2.0/24"], true],
    ["disjoint sets", ["10.0.0.0/24", "10.0.2.0/24"], ["10.0.1.0/24"], false],
    ["one shared range among several", ["10.0.0.0/24", "10.0.2.0/24"], ["10.0.3.0/24", "10.0.2.0/25"], true],
    ["other families", ["10.0.0.0/24"], ["::/64"], false],
  ])("overlaps with another set: %s", (_name, a, b, expected) => {
    const sa = new RangeSet(a.map((subnet) => ({ subnet })));
    const sb = new RangeSet(b.map((subnet) => ({ subnet })));
    expect(sa.overlaps(sb)).toBe(expected);
    expect(sb.overlaps(sa)).toBe(expected);
  });
});
