import { describe, expect, it } from "vitest";
import {
  AddressSet,
  cloudReservedAddresses,
  freeCount,
  IntervalSet,
  type NextFreeOptions,
  nextFree,
  poolCapacity,
  RangeSet,
} from "../../provider/allocator";

const set = (...subnets: string[]): RangeSet => new RangeSet(subnets.map((subnet) => ({ subnet })));

describe("nextFree", () => {
  it.each<[string, Omit<NextFreeOptions, "rangeSet">, string[], string]>([
    ["round-robin by default, fresh", {}, ["10.0.0.0/29"], "10.0.0.2"],
    ["round-robin after the cursor", { cursor: "10.0.0.4" }, ["10.0.0.0/29"], "10.0.0.5"],
    [
      "round-robin wraps and tries the cursor last",
      { cursor: "10.0.0.3", taken: ["10.0.0.2", "10.0.0.4", "10.0.0.5", "10.0.0.6"] },
      ["10.0.0.0/29"],
      "10.0.0.3",
    ],
    [
      "a cursor outside the set is ignored",
      { cursor: "192.168.0.1", taken: ["10.0.0.2"] },
      ["10.0.0.0/29"],
      "10.0.0.3",
    ],
    [
      "lowest-free ignores the cursor",
      { cursor: "10.0.0.4", strategy: "lowest-free", taken: ["10.0.0.2"] },
      ["10.0.0.0/29"],
      "10.0.0.3",
    ],
    ["exclusions", { exclude: ["10.0.0.2", "10.0.0.3/32"] }, ["10.0.0.0/29"], "10.0.0.4"],
    [
      "taken as an AddressSet",
      { taken: new AddressSet(["10.0.0.2", "10.0.0.3"]) },
      ["10.0.0.0/29"],
      "10.0.0.4",
    ],
    [
      "taken as an IntervalSet of values",
      { taken: new IntervalSet([[0x0a000002n, 0x0a000005n]]) },
      ["10.0.0.0/29"],
      "10.0.0.6",
    ],
    [
      "taken strings of the other family are ignored",
      { taken: ["2001:db8::2", "::ffff:10.0.0.2"] },
      ["10.0.0.0/29"],
      "10.0.0.3",
    ],
    [
      "jumps over a huge taken block in an IPv6 /64",
      {
        taken: new IntervalSet([[0x20010db8000000000000000000000002n, 0x20010db800000000ffffffff00000000n]]),
      },
      ["2001:db8::/64"],
      "2001:db8::ffff:ffff:0:1",
    ],
    [
      "IPv6 round-robin across ranges",
      { cursor: "2001:db8:0:1:ffff:ffff:ffff:ffff" },
      ["2001:db8:0:1::/64", "2001:db8:0:2::/64"],
      "2001:db8:0:2::2",
    ],
  ])("%s", (_name, options, subnets, expected) => {
    expect(nextFree({ rangeSet: set(...subnets), ...options })).toBe(expected);
  });

  it("does not reserve anything: the same inputs give the same answer", () => {
    const rangeSet = set("10.0.0.0/29");
    const taken = ["10.0.0.2"];
    expect(nextFree({ rangeSet, taken })).toBe("10.0.0.3");
    expect(nextFree({ rangeSet, taken })).toBe("10.0.0.3");
  });

  it.each<[string, NextFreeOptions, string]>([
    ["a full pool", { rangeSet: set("10.0.0.0/30"), taken: ["10.0.0.2"] }, "POOL_EXHAUSTED"],
    ["everything excluded", { rangeSet: set("10.0.0.0/29"), exclude: ["10.0.0.0/24"] }, "POOL_EXHAUSTED"],
    ["a garbage cursor", { rangeSet: set("10.0.0.0/29"), cursor: "10.0.0" }, "INVALID_ADDRESS"],
    ["a garbage taken address", { rangeSet: set("10.0.0.0/29"), taken: ["x"] }, "INVALID_ADDRESS"],
    [
      "an unknown strategy",
      { rangeSet: set("10.0.0.0/29"), strategy: "random" as "lowest-free" },
      "INVALID_CONFIG",
    ],
    ["a bad range set", { rangeSet: set("10.0.0.0/29", "10.0.0.0/30") }, "OVERLAPPING_RANGES"],
  ])("fails on %s", (_name, options, code) => {
    expect(() => nextFree(options)).toThrow(expect.objectContaining({ code }));
  });

  it("names the range set when exhausted", () => {
    expect(() =>
      nextFree({ rangeSet: set("10.0.0.0/30", "10.0.1.0/30"), taken: ["10.0.0.2", "10.0.1.2"] }),
    ).toThrow("no free address left in range set 10.0.0.1-10.0.0.2,10.0.1.1-10.0.1.2");
  });
});

describe("poolCapacity and freeCount", () => {
  it.each<[string, RangeSet, string[] | undefined, bigint]>([
    ["a /29: six addresses minus the gateway", set("10.0.0.0/29"), undefined, 5n],
    ["a /24", set("10.0.0.0/24"), undefined, 253n],
    ["two ranges", set("10.0.0.0/29", "10.0.1.0/30"), undefined, 6n],
    [
      "a gateway outside the range is not subtracted",
      new RangeSet([{ subnet: "10.0.0.0/29", rangeStart: "10.0.0.2" }]),
      undefined,
      5n,
    ],
    [
      "exclusions overlapping each other and the gateway",
      set("10.0.0.0/24"),
      ["10.0.0.0/28", "10.0.0.8/29", "10.0.0.200", "10.1.0.0/16", "2001:db8::1"],
      238n,
    ],
    ["an IPv6 /64", set("2001:db8::/64"), undefined, (1n << 64n) - 2n],
    [
      "an IPv6 /64 with AWS reservations",
      set("2001:db8::/64"),
      cloudReservedAddresses("2001:db8::/64", "aws"),
      (1n << 64n) - 5n,
    ],
    [
      "an IPv4 /24 with AWS reservations",
      set("10.0.0.0/24"),
      cloudReservedAddresses("10.0.0.0/24", "aws"),
      251n,
    ],
  ])("capacity of %s", (_name, rangeSet, exclude, expected) => {
    expect(poolCapacity(rangeSet, exclude)).toBe(expected);
    expect(freeCount(rangeSet, exclude, [])).toBe(expected);
  });

  it.each<[string, string[], bigint]>([
    ["nothing taken", [], 4n],
    ["two taken", ["10.0.0.2", "10.0.0.6"], 2n],
    [
      "taken outside, on the gateway or excluded do not count",
      ["10.0.0.1", "10.0.0.3", "10.0.0.4", "10.0.9.9", "2001:db8::2", "10.0.0.7"],
      3n,
    ],
    ["duplicates count once", ["10.0.0.2", "::ffff:10.0.0.2"], 3n],
  ])("free count of a /29 excluding .4 with %s", (_name, taken, expected) => {
    expect(freeCount(set("10.0.0.0/29"), ["10.0.0.4"], taken)).toBe(expected);
  });

  it("counts a huge taken block in an IPv6 /64 without enumerating it", () => {
    const taken = new IntervalSet([
      [0x20010db8000000000000000000000000n, 0x20010db8000000000000ffffffffffffn],
    ]);
    // Capacity 2^64 − 2 (no network address, no gateway); the block holds 2^48 − 2 of those.
    expect(freeCount(set("2001:db8::/64"), [], taken)).toBe((1n << 64n) - (1n << 48n));
  });
});

describe("cloudReservedAddresses", () => {
  it.each<[string, string[]]>([
    ["10.0.0.0/24", ["10.0.0.0", "10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.255"]],
    ["10.0.8.0/28", ["10.0.8.0", "10.0.8.1", "10.0.8.2", "10.0.8.3", "10.0.8.15"]],
    ["172.31.0.0/16", ["172.31.0.0", "172.31.0.1", "172.31.0.2", "172.31.0.3", "172.31.255.255"]],
    [
      "2001:db8:1::/64",
      ["2001:db8:1::", "2001:db8:1::1", "2001:db8:1::2", "2001:db8:1::3", "2001:db8:1:0:ffff:ffff:ffff:ffff"],
    ],
    ["10.0.0.0/30", ["10.0.0.0", "10.0.0.1", "10.0.0.2", "10.0.0.3"]],
  ])("aws reserves the first four and the last address of %s", (subnet, expected) => {
    expect(cloudReservedAddresses(subnet, "aws")).toEqual(expected);
  });

  it.each<[string, string, string]>([
    ["10.0.0.5/24", "aws", "HOST_BITS_SET"],
    ["nope", "aws", "INVALID_ADDRESS"],
    ["10.0.0.0/24", "gcp", "INVALID_CONFIG"],
  ])("rejects %s for %s", (subnet, provider, code) => {
    expect(() => cloudReservedAddresses(subnet, provider as "aws")).toThrow(
      expect.objectContaining({ code }),
    );
  });
});
