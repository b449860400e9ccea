import { describe, expect, it } from "vitest";
import { IpamError, Range, type RangeInit } from "../../provider/allocator";

function thrown(fn: () => unknown): IpamError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(IpamError);
    return err as IpamError;
  }
  throw new Error("expected an IpamError");
}

describe("Range.canonicalize", () => {
  it.each<[string, RangeInit, Required<RangeInit>]>([
    [
      "IPv4 /24 defaults",
      { subnet: "192.0.2.0/24" },
      { subnet: "192.0.2.0/24", rangeStart: "192.0.2.1", rangeEnd: "192.0.2.254", gateway: "192.0.2.1" },
    ],
    [
      "IPv4 /25 defaults",
      { subnet: "192.0.2.0/25" },
      { subnet: "192.0.2.0/25", rangeStart: "192.0.2.1", rangeEnd: "192.0.2.126", gateway: "192.0.2.1" },
    ],
    [
      "IPv4 /30, the smallest",
      { subnet: "10.0.0.0/30" },
      { subnet: "10.0.0.0/30", rangeStart: "10.0.0.1", rangeEnd: "10.0.0.2", gateway: "10.0.0.1" },
    ],
    [
      "IPv6 /64 defaults: the last address, in RFC 5952 form",
      { subnet: "2001:DB8:1::/64" },
      {
        subnet: "2001:db8:1::/64",
        rangeStart: "2001:db8:1::1",
        rangeEnd: "2001:db8:1:0:ffff:ffff:ffff:ffff",
        gateway: "2001:db8:1::1",
      },
    ],
    [
      "IPv6 /126, the smallest",
      { subnet: "2001:db8::/126" },
      {
        subnet: "2001:db8::/126",
        rangeStart: "2001:db8::1",
        rangeEnd: "2001:db8::3",
        gateway: "2001:db8::1",
      },
    ],
    [
      "all fields given",
      { subnet: "192.0.2.0/24", rangeStart: "192.0.2.40", rangeEnd: "192.0.2.50", gateway: "192.0.2.254" },
      { subnet: "192.0.2.0/24", rangeStart: "192.0.2.40", rangeEnd: "192.0.2.50", gateway: "192.0.2.254" },
    ],
    [
      "gateway outside the subnet is kept, as host-local does",
      { subnet: "10.1.0.0/24", gateway: "10.9.9.9" },
      { subnet: "10.1.0.0/24", rangeStart: "10.1.0.1", rangeEnd: "10.1.0.254", gateway: "10.9.9.9" },
    ],
    [
      "bounds may be the network and broadcast addresses",
      { subnet: "10.1.0.0/29", rangeStart: "10.1.0.0", rangeEnd: "10.1.0.7" },
      { subnet: "10.1.0.0/29", rangeStart: "10.1.0.0", rangeEnd: "10.1.0.7", gateway: "10.1.0.1" },
    ],
    [
      "IPv4-mapped and uppercase spellings become canonical",
      { subnet: "::ffff:10.2.0.0/120", rangeStart: "::FFFF:10.2.0.9", gateway: "::ffff:a02:1" },
      { subnet: "10.2.0.0/24", rangeStart: "10.2.0.9", rangeEnd: "10.2.0.254", gateway: "10.2.0.1" },
    ],
    [
      "IPv6 with explicit bounds",
      { subnet: "2001:db8:1::/64", rangeStart: "2001:DB8:1::40", rangeEnd: "2001:db8:1:0:0:0:0:50" },
      {
        subnet: "2001:db8:1::/64",
        rangeStart: "2001:db8:1::40",
        rangeEnd: "2001:db8:1::50",
        gateway: "2001:db8:1::1",
      },
    ],
  ])("%s", (_name, init, expected) => {
    const r = new Range(init).canonicalize();
    expect({ subnet: r.subnet, rangeStart: r.rangeStart, rangeEnd: r.rangeEnd, gateway: r.gateway }).toEqual(
      expected,
    );
    expect(r.toJSON()).toEqual(expected);
    // Idempotent.
    expect(new Range(expected).canonicalize().toJSON()).toEqual(expected);
  });

  it.each<[string, RangeInit, string, RegExp]>([
    [
      "IPv4 host bits",
      { subnet: "192.0.2.12/24" },
      "HOST_BITS_SET",
      /192\.0\.2\.12\/24.*network address is 192\.0\.2\.0\b/,
    ],
    [
      "IPv4 /23 host bit",
      { subnet: "192.168.127.0/23" },
      "HOST_BITS_SET",
      /network address is 192\.168\.126\.0\b/,
    ],
    [
      "IPv6 host bits",
      { subnet: "2001:DB8:1::24:19ff:fee1:c44a/64" },
      "HOST_BITS_SET",
      /network address is 2001:db8:1:: /,
    ],
    [
      "IPv6 /63 host bit",
      { subnet: "2001:DB8:24:19ff::/63" },
      "HOST_BITS_SET",
      /network address is 2001:db8:24:19fe:: /,
    ],
    ["IPv4 /31", { subnet: "192.0.2.0/31" }, "NETWORK_TOO_SMALL", /network 192\.0\.2\.0\/31 is too small/],
    ["IPv4 /32", { subnet: "192.0.2.7/32" }, "NETWORK_TOO_SMALL", /192\.0\.2\.7\/32/],
    ["IPv6 /127", { subnet: "2001:db8::/127" }, "NETWORK_TOO_SMALL", /2001:db8::\/127/],
    ["IPv6 /128", { subnet: "2001:db8::1/128" }, "NETWORK_TOO_SMALL", /2001:db8::1\/128/],
    [
      "too small wins over host bits, as in host-local",
      { subnet: "192.0.2.1/31" },
      "NETWORK_TOO_SMALL",
      /192\.0\.2\.0\/31/,
    ],
    [
      "rangeStart outside",
      { subnet: "192.0.2.0/24", rangeStart: "192.0.3.0" },
      "INVALID_RANGE",
      /rangeStart 192\.0\.3\.0 is not in subnet 192\.0\.2\.0\/24/,
    ],
    [
      "rangeEnd outside",
      { subnet: "192.0.2.0/24", rangeEnd: "192.0.4.0" },
      "INVALID_RANGE",
      /rangeEnd 192\.0\.4\.0 is not in subnet 192\.0\.2\.0\/24/,
    ],
    [
      "reversed bounds",
      { subnet: "192.0.2.0/24", rangeStart: "192.0.2.50", rangeEnd: "192.0.2.40" },
      "INVALID_RANGE",
      /rangeStart 192\.0\.2\.50 is after rangeEnd 192\.0\.2\.40/,
    ],
    [
      "default end before given start",
      { subnet: "10.0.0.0/29", rangeStart: "10.0.0.7" },
      "INVALID_RANGE",
      /after rangeEnd 10\.0\.0\.6/,
    ],
    [
      "rangeStart of the other family",
      { subnet: "10.0.0.0/24", rangeStart: "2001:db8::1" },
      "INVALID_RANGE",
      /rangeStart 2001:db8::1 is IPv6/,
    ],
    [
      "gateway of the other family",
      { subnet: "2001:db8::/64", gateway: "10.0.0.1" },
      "INVALID_RANGE",
      /gateway 10\.0\.0\.1 is IPv4/,
    ],
    ["missing subnet", {} as RangeInit, "INVALID_RANGE", /no subnet/],
    ["subnet without a prefix length", { subnet: "10.0.0.0" }, "INVALID_ADDRESS", /"10\.0\.0\.0"/],
    ["garbage subnet", { subnet: "ten/8" }, "INVALID_ADDRESS", /"ten\/8"/],
    [
      "garbage gateway",
      { subnet: "10.0.0.0/24", gateway: "10.0.0.x" },
      "INVALID_ADDRESS",
      /gateway "10\.0\.0\.x"/,
    ],
  ])("rejects %s", (_name, init, code, message) => {
    const err = thrown(() => new Range(init).canonicalize());
    expect(err.code).toBe(code);
    expect(err.message).toMatch(message);
  });
});

describe("Range.contains", () => {
  const r = new Range({
    subnet: "192.0.2.0/24",
    rangeStart: "192.0.2.40",
    rangeEnd: "192.0.2.50",
    gateway: "192.0.2.254",
  });
  const r6 = new Range({
    subnet: "2001:DB8:1::/64",
    rangeStart: "2001:db8:1::40",
    rangeEnd: "2001:db8:1::50",
  });
  it.each<[Range, string, boolean]>([
    [r, "192.0.3.0", false],
    [r, "192.0.2.39", false],
    [r, "192.0.2.40", true],
    [r, "192.0.2.50", true],
    [r, "192.0.2.51", false],
    [r, "::ffff:192.0.2.45", true],
    [r, "2001:db8:1::45", false],
    [r6, "2001:db8:2::", false],
    [r6, "2001:db8:1::39", false],
    [r6, "2001:db8:1::40", true],
    [r6, "2001:DB8:1::50", true],
    [r6, "2001:db8:1::51", false],
    [r6, "192.0.2.45", false],
  ])("%s contains %s: %s", (range, ip, expected) => {
    expect(range.contains(ip)).toBe(expected);
  });

  it("rejects garbage", () => {
    expect(() => r.contains("nope")).toThrow(expect.objectContaining({ code: "INVALID_ADDRESS" }));
  });

  it("does not rewrite the fields, and sees later changes", () => {
    const x = new Range({ subnet: "10.0.0.0/24" });
    expect(x.contains("10.0.0.254")).toBe(true);
    expect(x.rangeEnd).toBeUndefined();
    x.rangeEnd = "10.0.0.100";
    expect(x.contains("10.0.0.254")).toBe(false);
    expect(x.canonicalize().rangeEnd).toBe("10.0.0.100");
  });
});

describe("Range.overlaps", () => {
  it.each<[string, RangeInit, RangeInit, boolean]>([
    ["non-overlapping", { subnet: "10.0.0.0/24" }, { subnet: "10.0.1.0/24" }, false],
    ["different families with the same bits", { subnet: "0.0.0.0/24" }, { subnet: "::/120" }, false],
    ["identical", { subnet: "10.0.0.0/24" }, { subnet: "10.0.0.0/24" }, true],
    ["containing", { subnet: "10.0.0.0/20" }, { subnet: "10.0.1.0/24" }, true],
    [
      "same subnet, disjoint bounds",
      { subnet: "10.0.0.0/24", rangeEnd: "10.0.0.127" },
      { subnet: "10.0.0.0/24", rangeStart: "10.0.0.128" },
      false,
    ],
    [
      "same subnet, sharing one address",
      { subnet: "10.0.0.0/24", rangeEnd: "10.0.0.127" },
      { subnet: "10.0.0.0/24", rangeStart: "10.0.0.127" },
      true,
    ],
  ])("%s", (_name, a, b, expected) => {
    const ra = new Range(a);
    const rb = new Range(b);
    expect(ra.overlaps(rb)).toBe(expected);
    expect(rb.overlaps(ra)).toBe(expected);
  });
});

describe("Range.toString", () => {
  it.each([
    [{ subnet: "10.0.0.0/29" }, "10.0.0.1-10.0.0.6"],
    [{ subnet: "2001:db8:1::/64" }, "2001:db8:1::1-2001:db8:1:0:ffff:ffff:ffff:ffff"],
    [{ subnet: "10.0.0.5/24" }, "10.0.0.5/24"],
  ])("%j → %s", (init, expected) => {
    expect(String(new Range(init))).toBe(expected);
  });
});
