import { Address4, Address6 } from "ip-address";
import { describe, expect, it } from "vitest";
import {
  AddressSet,
  checkBlock,
  IntervalSet,
  type IpamErrorCode,
  type NextFreeBlockOptions,
  nextFreeBlock,
  type RangeInit,
  RangeSet,
  type ReadonlyIntervalSet,
} from "../../provider/allocator";

/** The first and last address of a CIDR, read by ip-address (independent of ours). */
function span(cidr: string): [bigint, bigint] {
  const a = cidr.includes(":") ? new Address6(cidr) : new Address4(cidr);
  return [a.startAddress().bigInt(), a.endAddress().bigInt()];
}

/**
 * A range over the whole of `subnet`, its gateway just outside it: what most cases below use, so
 * they exercise the search itself. Where a range's bounds and gateway keep blocks out (host-local's
 * defaults among them) has cases of its own, written as RangeInit objects.
 */
function whole(subnet: string): RangeInit {
  const v6 = subnet.includes(":");
  const text = (v: bigint) =>
    v6 ? Address6.fromBigInt(v).correctForm() : Address4.fromBigInt(v).correctForm();
  const [first, last] = span(subnet);
  const gateway = last + 1n < 1n << (v6 ? 128n : 32n) ? last + 1n : first - 1n;
  return { subnet, rangeStart: text(first), rangeEnd: text(last), gateway: text(gateway) };
}

type Ranges = (string | RangeInit)[];
const set = (ranges: Ranges): RangeSet =>
  new RangeSet(ranges.map((r) => (typeof r === "string" ? whole(r) : r)));

const v6 = (cidr: string): bigint => span(cidr)[0];

type Options = Omit<NextFreeBlockOptions, "rangeSet">;

describe("nextFreeBlock", () => {
  it.each<[string, Ranges, Options, string]>([
    // First fit (round-robin, the default) without a cursor.
    ["first fit from the start", ["10.0.0.0/16"], { prefixLength: 24 }, "10.0.0.0/24"],
    // Blocks come from between rangeStart and rangeEnd, never over the range's gateway (issue #56).
    [
      "from inside rangeStart-rangeEnd, not from the rest of the subnet",
      [{ subnet: "10.90.0.0/16", rangeStart: "10.90.7.0", rangeEnd: "10.90.7.255", gateway: "10.90.0.1" }],
      { prefixLength: 26 },
      "10.90.7.0/26",
    ],
    [
      "best fit inside rangeStart-rangeEnd",
      [{ subnet: "10.90.0.0/16", rangeStart: "10.90.7.0", rangeEnd: "10.90.7.255", gateway: "10.90.0.1" }],
      { prefixLength: 26, strategy: "lowest-free" },
      "10.90.7.0/26",
    ],
    [
      "a range that is one aligned block gives it whole",
      [{ subnet: "10.90.0.0/16", rangeStart: "10.90.7.0", rangeEnd: "10.90.7.255", gateway: "10.90.0.1" }],
      { prefixLength: 24 },
      "10.90.7.0/24",
    ],
    [
      "the default range: the subnet's first block holds its network address and gateway",
      [{ subnet: "10.0.0.0/8" }],
      { prefixLength: 16 },
      "10.1.0.0/16",
    ],
    [
      "the default range of a /24: no /32 of the network address",
      [{ subnet: "10.0.0.0/24" }],
      { prefixLength: 32 },
      "10.0.0.2/32",
    ],
    [
      "the default range: the subnet's last block holds its broadcast address",
      [{ subnet: "10.0.0.0/24" }],
      { prefixLength: 26, cursor: "10.0.0.128/26" },
      "10.0.0.64/26",
    ],
    [
      "a gateway inside the range: first fit steps over the block holding it",
      [{ subnet: "10.0.0.0/24", rangeStart: "10.0.0.0", rangeEnd: "10.0.0.255", gateway: "10.0.0.70" }],
      { prefixLength: 26, taken: ["10.0.0.0/26"] },
      "10.0.0.128/26",
    ],
    [
      "a gateway inside the range: best fit leaves it out of the free space",
      [{ subnet: "10.0.0.0/24", rangeStart: "10.0.0.0", rangeEnd: "10.0.0.255", gateway: "10.0.0.70" }],
      { prefixLength: 27, strategy: "lowest-free" },
      "10.0.0.96/27",
    ],
    [
      "rangeEnd cuts the last block off: the cursor wraps",
      [{ subnet: "10.0.0.0/24", rangeStart: "10.0.0.0", rangeEnd: "10.0.0.254", gateway: "10.0.1.1" }],
      { prefixLength: 26, cursor: "10.0.0.128/26" },
      "10.0.0.0/26",
    ],
    [
      // As for single addresses (host-local skips a range's gateway in that range only).
      "a gateway outside its own range keeps nothing out of another",
      [
        { subnet: "10.0.0.0/24", rangeStart: "10.0.0.0", rangeEnd: "10.0.0.127", gateway: "10.0.0.130" },
        { subnet: "10.0.0.0/24", rangeStart: "10.0.0.128", rangeEnd: "10.0.0.255", gateway: "10.0.0.10" },
      ],
      { prefixLength: 26, cursor: "10.0.0.64/26" },
      "10.0.0.128/26",
    ],
    [
      "too long for the first subnet, found in the next",
      ["10.0.0.0/24", "10.1.0.0/16"],
      { prefixLength: 20 },
      "10.1.0.0/20",
    ],
    ["subnets in range-set order", ["10.1.0.0/24", "10.0.0.0/24"], { prefixLength: 26 }, "10.1.0.0/26"],
    [
      "a taken address inside a would-be block",
      ["10.0.0.0/24"],
      { prefixLength: 26, taken: ["10.0.0.5"] },
      "10.0.0.64/26",
    ],
    [
      "aligns up past a taken run",
      ["10.0.0.0/24"],
      { prefixLength: 26, taken: ["10.0.0.0/28"] },
      "10.0.0.64/26",
    ],
    [
      "a taken run that ends mid-block",
      ["10.0.0.0/24"],
      { prefixLength: 27, taken: new IntervalSet([[span("10.0.0.0")[0], span("10.0.0.40")[0]]]) },
      "10.0.0.64/27",
    ],
    ["exclusions", ["10.0.0.0/24"], { prefixLength: 25, exclude: ["10.0.0.0/25"] }, "10.0.0.128/25"],
    [
      "an excluded address inside a would-be block",
      ["10.0.0.0/24"],
      { prefixLength: 25, exclude: ["10.0.0.127", "2001:db8::/32"] },
      "10.0.0.128/25",
    ],
    [
      "taken as an AddressSet",
      ["10.0.0.0/29"],
      { prefixLength: 30, taken: new AddressSet(["10.0.0.2"]) },
      "10.0.0.4/30",
    ],
    [
      "taken strings of the other family are ignored; IPv4-mapped ones are IPv4",
      ["10.0.0.0/24"],
      { prefixLength: 26, taken: ["2001:db8::/64", "::ffff:10.0.0.0/122"] },
      "10.0.0.64/26",
    ],
    // Round-robin with a cursor.
    ["after a cursor block", ["10.0.0.0/16"], { prefixLength: 24, cursor: "10.0.3.0/24" }, "10.0.4.0/24"],
    ["after a cursor address", ["10.0.0.0/16"], { prefixLength: 24, cursor: "10.0.3.7" }, "10.0.4.0/24"],
    [
      "the cursor wraps to the first subnet",
      ["10.0.0.0/22"],
      { prefixLength: 24, cursor: "10.0.3.0/24", taken: ["10.0.0.0/24"] },
      "10.0.1.0/24",
    ],
    [
      "the cursor block itself comes last",
      ["10.0.0.0/22"],
      { prefixLength: 24, cursor: "10.0.1.0/24", taken: ["10.0.0.0/24", "10.0.2.0/23"] },
      "10.0.1.0/24",
    ],
    [
      "the cursor moves on to the next subnet in range-set order",
      ["10.1.0.0/24", "10.0.0.0/24"],
      { prefixLength: 26, cursor: "10.1.0.192/26" },
      "10.0.0.0/26",
    ],
    [
      "a cursor outside every subnet is ignored",
      ["10.0.0.0/24"],
      { prefixLength: 26, cursor: "192.168.0.0/26" },
      "10.0.0.0/26",
    ],
    [
      "a cursor of the other family is ignored",
      ["10.0.0.0/24"],
      { prefixLength: 26, cursor: "::1" },
      "10.0.0.0/26",
    ],
    // Best fit (lowest-free).
    [
      "best fit keeps the /25 whole",
      ["10.0.0.0/24"],
      { prefixLength: 26, strategy: "lowest-free", taken: ["10.0.0.0/26"] },
      "10.0.0.64/26",
    ],
    [
      "best fit takes the lowest of the exact fits",
      ["10.0.0.0/24"],
      { prefixLength: 26, strategy: "lowest-free", taken: ["10.0.0.64/26"] },
      "10.0.0.0/26",
    ],
    [
      "best fit: a hole left by an exclusion",
      ["10.0.0.0/24"],
      { prefixLength: 26, strategy: "lowest-free", exclude: ["10.0.0.5"] },
      "10.0.0.64/26",
    ],
    [
      "best fit prefers a smaller subnet that fits exactly",
      ["10.0.0.0/24", "10.0.1.0/26"],
      { prefixLength: 26, strategy: "lowest-free" },
      "10.0.1.0/26",
    ],
    [
      "best fit ties go to the lowest address, whatever the range-set order",
      ["10.0.1.0/26", "10.0.0.0/26"],
      { prefixLength: 27, strategy: "lowest-free" },
      "10.0.0.0/27",
    ],
    [
      "best fit ignores the cursor",
      ["10.0.0.0/24"],
      { prefixLength: 26, strategy: "lowest-free", cursor: "10.0.0.0/26" },
      "10.0.0.0/26",
    ],
    // IPv6.
    [
      "a /64 out of a /48: not the first, which holds the network address and the gateway",
      [{ subnet: "2001:db8::/48" }],
      { prefixLength: 64 },
      "2001:db8:0:1::/64",
    ],
    [
      "the whole address space: its first half holds the gateway",
      [{ subnet: "::/0" }],
      { prefixLength: 1, cursor: "ffff::/16" },
      "8000::/1",
    ],
    [
      "a cursor on the last address wraps",
      [{ subnet: "0.0.0.0/0", rangeStart: "0.0.0.0", rangeEnd: "255.255.255.255", gateway: "0.0.0.1" }],
      { prefixLength: 2, cursor: "255.255.255.255", taken: ["64.0.0.0/2"] },
      "128.0.0.0/2",
    ],
    [
      "the /64 after a cursor",
      ["2001:db8::/48"],
      { prefixLength: 64, cursor: "2001:db8:0:5::/64" },
      "2001:db8:0:6::/64",
    ],
    [
      "a taken address inside a /64",
      ["2001:db8::/48"],
      { prefixLength: 64, taken: ["2001:db8::1"] },
      "2001:db8:0:1::/64",
    ],
    [
      "a /56 out of a /32, best fit",
      ["2001:db8::/32"],
      { prefixLength: 56, strategy: "lowest-free", taken: ["2001:db8::/56"] },
      "2001:db8:0:100::/56",
    ],
    [
      "jumps a huge taken interval",
      ["2001:db8::/48"],
      { prefixLength: 64, taken: new IntervalSet([[v6("2001:db8::/64"), v6("2001:db8:0:fffe::/64") + 5n]]) },
      "2001:db8:0:ffff::/64",
    ],
    [
      "wraps in IPv6 and skips an exclusion",
      ["2001:db8::/62"],
      { prefixLength: 64, cursor: "2001:db8:0:3::/64", exclude: ["2001:db8::/64"] },
      "2001:db8:0:1::/64",
    ],
  ])("%s", (_name, ranges, options, expected) => {
    expect(nextFreeBlock({ rangeSet: set(ranges), ...options })).toBe(expected);
  });

  it.each<[string, Ranges, Options, IpamErrorCode, string]>([
    [
      "a block longer than every subnet",
      ["10.0.0.0/16"],
      { prefixLength: 8 },
      "POOL_EXHAUSTED",
      "no free /8 block left in range set 10.0.0.0-10.0.255.255",
    ],
    [
      "two adjacent subnets do not make one block",
      ["10.0.0.0/25", "10.0.0.128/25"],
      { prefixLength: 24 },
      "POOL_EXHAUSTED",
      "no free /24 block left in range set 10.0.0.0-10.0.0.127,10.0.0.128-10.0.0.255",
    ],
    [
      "everything taken or excluded",
      ["10.0.0.0/24"],
      { prefixLength: 25, taken: ["10.0.0.0/25"], exclude: ["10.0.0.200"] },
      "POOL_EXHAUSTED",
      "no free /25 block left in range set 10.0.0.0-10.0.0.255",
    ],
    [
      "best fit, exhausted",
      ["2001:db8::/48"],
      { prefixLength: 48, strategy: "lowest-free", taken: ["2001:db8:0:7::1"] },
      "POOL_EXHAUSTED",
      "no free /48 block left in range set 2001:db8::-2001:db8:0:ffff:ffff:ffff:ffff:ffff",
    ],
    ["a prefix length over 32", ["10.0.0.0/24"], { prefixLength: 33 }, "INVALID_CONFIG", "length 33 is not"],
    ["a prefix length over 128", ["2001:db8::/64"], { prefixLength: 129 }, "INVALID_CONFIG", "length 129"],
    ["a negative prefix length", ["10.0.0.0/24"], { prefixLength: -1 }, "INVALID_CONFIG", "length -1 "],
    ["a fractional prefix length", ["10.0.0.0/24"], { prefixLength: 24.5 }, "INVALID_CONFIG", "length 24.5"],
    [
      "a prefix length given as text",
      ["10.0.0.0/24"],
      { prefixLength: "24" as unknown as number },
      "INVALID_CONFIG",
      'length "24"',
    ],
    [
      "an unknown strategy",
      ["10.0.0.0/24"],
      { prefixLength: 26, strategy: "best-fit" as "lowest-free" },
      "INVALID_CONFIG",
      '"best-fit"',
    ],
    ["a bad cursor", ["10.0.0.0/24"], { prefixLength: 26, cursor: "nope" }, "INVALID_ADDRESS", '"nope"'],
    [
      "a cursor with host bits set",
      ["10.0.0.0/24"],
      { prefixLength: 26, cursor: "10.0.0.1/26" },
      "HOST_BITS_SET",
      "10.0.0.0/26",
    ],
    [
      "a bad taken string",
      ["10.0.0.0/24"],
      { prefixLength: 26, taken: ["10.0.0.x"] },
      "INVALID_ADDRESS",
      "10.0.0.x",
    ],
    [
      "a bad taken CIDR",
      ["10.0.0.0/24"],
      { prefixLength: 26, taken: ["10.0.0.0/33"] },
      "INVALID_ADDRESS",
      "10.0.0.0/33",
    ],
    [
      "a taken CIDR with host bits set",
      ["10.0.0.0/24"],
      { prefixLength: 26, taken: ["10.0.0.1/24"] },
      "HOST_BITS_SET",
      "use 10.0.0.0/24",
    ],
    ["a bad exclusion", ["10.0.0.0/24"], { prefixLength: 26, exclude: ["bad"] }, "INVALID_ADDRESS", '"bad"'],
    ["an empty range set", [], { prefixLength: 26 }, "EMPTY_RANGE_SET", "no ranges"],
  ])("%s: %s", (_name, ranges, options, code, text) => {
    expect(() => nextFreeBlock({ rangeSet: set(ranges), ...options })).toThrow(
      expect.objectContaining({ code, message: expect.stringContaining(text) }),
    );
  });

  it("does not reserve anything: the same inputs give the same block", () => {
    const options = { rangeSet: set(["10.0.0.0/24"]), prefixLength: 26, taken: ["10.0.0.0/26"] };
    expect(nextFreeBlock(options)).toBe("10.0.0.64/26");
    expect(nextFreeBlock(options)).toBe("10.0.0.64/26");
  });

  it.each(["round-robin", "lowest-free"] as const)(
    "%s: carves 1,000 /64s from a /48 and 1,000 /56s from a /32 without enumerating",
    (strategy) => {
      for (const [subnet, prefixLength] of [
        ["2001:db8::/48", 64],
        ["2001:db8::/32", 56],
      ] as const) {
        const rangeSet = set([subnet]);
        const taken = new CountingSet();
        let cursor: string | undefined;
        const t0 = performance.now();
        for (let i = 0; i < 1000; i++) {
          const before = taken.calls;
          cursor = nextFreeBlock({ rangeSet, prefixLength, taken, strategy, cursor });
          // A handful of O(log n) set operations per block, never one per address or candidate.
          expect(taken.calls - before).toBeLessThanOrEqual(8);
          const [first, last] = span(cursor);
          expect(taken.inner.countIn(first, last)).toBe(0n);
          taken.inner.add(first, last);
        }
        expect(performance.now() - t0).toBeLessThan(1000);
        expect(taken.inner.intervalCount).toBe(1);
        expect(taken.inner.size).toBe(1000n << BigInt(128 - prefixLength));
      }
    },
  );
});

describe("checkBlock", () => {
  it.each<[string, Ranges, string, Partial<Parameters<typeof checkBlock>[0]>, string]>([
    ["a block inside the range", ["10.0.0.0/16"], "10.0.1.0/24", {}, "10.0.1.0/24"],
    [
      "a block inside rangeStart-rangeEnd",
      [{ subnet: "10.90.0.0/16", rangeStart: "10.90.7.0", rangeEnd: "10.90.7.255", gateway: "10.90.0.1" }],
      "10.90.7.64/26",
      {},
      "10.90.7.64/26",
    ],
    [
      "the whole subnet when the range is all of it and the gateway outside",
      [{ subnet: "10.0.0.0/24", rangeStart: "10.0.0.0", rangeEnd: "10.0.0.255", gateway: "10.0.1.1" }],
      "10.0.0.0/24",
      {},
      "10.0.0.0/24",
    ],
    ["IPv6, canonicalized", ["2001:db8::/48"], "2001:DB8:0:5:0::/64", {}, "2001:db8:0:5::/64"],
    ["an IPv4-mapped CIDR", ["10.0.0.0/24"], "::ffff:10.0.0.64/122", {}, "10.0.0.64/26"],
    [
      "taken and excluded addresses next to it",
      ["10.0.0.0/24"],
      "10.0.0.64/26",
      { taken: ["10.0.0.63", "10.0.0.128/25"], exclude: ["10.0.0.0/26"] },
      "10.0.0.64/26",
    ],
  ])("%s", (_name, ranges, cidr, options, expected) => {
    expect(checkBlock({ rangeSet: set(ranges), cidr, ...options })).toBe(expected);
  });

  it.each<[string, Ranges, string, Partial<Parameters<typeof checkBlock>[0]>, IpamErrorCode, string]>([
    [
      "not a CIDR",
      ["10.0.0.0/24"],
      "10.0.0.0",
      {},
      "INVALID_ADDRESS",
      'block "10.0.0.0" is not a valid CIDR',
    ],
    ["garbage", ["10.0.0.0/24"], "ten/8", {}, "INVALID_ADDRESS", '"ten/8"'],
    [
      "host bits set",
      ["10.0.0.0/16"],
      "10.0.1.5/24",
      {},
      "HOST_BITS_SET",
      "block 10.0.1.5/24 has host bits set: for a /24 prefix the network address is 10.0.1.0 (use 10.0.1.0/24)",
    ],
    [
      "in the subnet but outside rangeStart-rangeEnd (issue #56)",
      [{ subnet: "10.90.0.0/16", rangeStart: "10.90.7.0", rangeEnd: "10.90.7.255", gateway: "10.90.0.1" }],
      "10.90.0.0/26",
      {},
      "NOT_IN_RANGE",
      "block 10.90.0.0/26 is not inside one range of range set 10.90.7.0-10.90.7.255: a block is carved " +
        "from between a range's rangeStart and rangeEnd; ask for a block inside one, or widen the range",
    ],
    [
      "holding the subnet's network address, outside the default range",
      [{ subnet: "10.0.0.0/16" }],
      "10.0.0.0/16",
      {},
      "NOT_IN_RANGE",
      "block 10.0.0.0/16 is not inside one range of range set 10.0.0.1-10.0.255.254",
    ],
    [
      "holding the range's gateway",
      [{ subnet: "10.0.0.0/24", rangeStart: "10.0.0.0", rangeEnd: "10.0.0.255", gateway: "10.0.0.70" }],
      "10.0.0.64/26",
      {},
      "IP_UNAVAILABLE",
      "block 10.0.0.64/26 contains the gateway 10.0.0.70 of range 10.0.0.0-10.0.0.255: ask for a block " +
        "without it",
    ],
    [
      "outside the set",
      ["10.0.0.0/16"],
      "10.1.0.0/24",
      {},
      "NOT_IN_RANGE",
      "block 10.1.0.0/24 is not inside one range of range set 10.0.0.0-10.0.255.255",
    ],
    [
      "larger than the range",
      ["10.0.0.0/16"],
      "10.0.0.0/8",
      {},
      "NOT_IN_RANGE",
      "block 10.0.0.0/8 is not inside one range",
    ],
    [
      "across two ranges",
      ["10.0.0.0/25", "10.0.0.128/25"],
      "10.0.0.0/24",
      {},
      "NOT_IN_RANGE",
      "block 10.0.0.0/24 is not inside one range of range set 10.0.0.0-10.0.0.127,10.0.0.128-10.0.0.255",
    ],
    [
      "of the other family",
      ["10.0.0.0/16"],
      "2001:db8::/64",
      {},
      "NOT_IN_RANGE",
      "block 2001:db8::/64 is IPv6 but range set 10.0.0.0-10.0.255.255 is IPv4",
    ],
    [
      "overlapping a taken address",
      ["10.0.0.0/16"],
      "10.0.1.0/24",
      { taken: ["10.0.1.7"] },
      "IP_UNAVAILABLE",
      "block 10.0.1.0/24 overlaps taken 10.0.1.7 in range set 10.0.0.0-10.0.255.255",
    ],
    [
      "inside a taken block",
      ["10.0.0.0/16"],
      "10.0.1.0/24",
      { taken: ["10.0.0.0/23"] },
      "IP_UNAVAILABLE",
      "block 10.0.1.0/24 is taken in range set",
    ],
    [
      "containing a taken block",
      ["10.0.0.0/16"],
      "10.0.1.0/24",
      { taken: new AddressSet(["10.0.1.64"]) },
      "IP_UNAVAILABLE",
      "overlaps taken 10.0.1.64",
    ],
    [
      "containing a taken block given as CIDR",
      ["10.0.0.0/16"],
      "10.0.1.0/24",
      { taken: ["10.0.1.64/26", "10.0.1.200"] },
      "IP_UNAVAILABLE",
      "block 10.0.1.0/24 overlaps taken 10.0.1.64/26 in",
    ],
    [
      "overlapping the start of a taken run",
      ["2001:db8::/48"],
      "2001:db8:0:1::/64",
      { taken: new IntervalSet([[v6("2001:db8:0:1::/64") + 3n, v6("2001:db8:0:2::/64")]]) },
      "IP_UNAVAILABLE",
      "block 2001:db8:0:1::/64 overlaps taken 2001:db8:0:1::3-2001:db8:0:1:ffff:ffff:ffff:ffff",
    ],
    [
      "containing an excluded address",
      ["10.0.0.0/16"],
      "10.0.1.0/24",
      { exclude: ["10.0.1.9"] },
      "IP_UNAVAILABLE",
      "block 10.0.1.0/24 contains excluded 10.0.1.9 in range set",
    ],
    [
      "excluded as a whole",
      ["10.0.0.0/16"],
      "10.0.1.0/24",
      { exclude: ["10.0.0.0/20"], taken: ["10.0.1.1"] },
      "IP_UNAVAILABLE",
      "block 10.0.1.0/24 is excluded in range set",
    ],
    [
      "a bad taken entry",
      ["10.0.0.0/16"],
      "10.0.1.0/24",
      { taken: ["10.0.1.1/16"] },
      "HOST_BITS_SET",
      "taken entry 10.0.1.1/16",
    ],
  ])("%s", (_name, ranges, cidr, options, code, text) => {
    expect(() => checkBlock({ rangeSet: set(ranges), cidr, ...options })).toThrow(
      expect.objectContaining({ code, message: expect.stringContaining(text) }),
    );
  });
});

/** An IntervalSet that counts the calls the search makes on it. */
class CountingSet implements ReadonlyIntervalSet {
  readonly inner = new IntervalSet();
  calls = 0;
  get size(): bigint {
    return this.inner.size;
  }
  get intervalCount(): number {
    return this.inner.intervalCount;
  }
  has(value: bigint): boolean {
    this.calls++;
    return this.inner.has(value);
  }
  nextAbsent(from: bigint): bigint {
    this.calls++;
    return this.inner.nextAbsent(from);
  }
  countIn(start: bigint, end: bigint): bigint {
    this.calls++;
    return this.inner.countIn(start, end);
  }
  *intervals(from?: bigint, to?: bigint): IterableIterator<[bigint, bigint]> {
    this.calls++;
    for (const interval of this.inner.intervals(from, to)) {
      this.calls++;
      yield interval;
    }
  }
}
