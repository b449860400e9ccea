import { describe, expect, it } from "vitest";
import {
  addressFamily,
  canonicalAddress,
  canonicalCidr,
  familyOfText,
  IpamError,
} from "../../provider/allocator";

describe("canonicalAddress", () => {
  it.each([
    ["10.0.0.1", "10.0.0.1"],
    ["0.0.0.0", "0.0.0.0"],
    ["255.255.255.255", "255.255.255.255"],
    ["2001:DB8::1", "2001:db8::1"],
    ["2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"],
    ["2001:db8:1:0:ffff:ffff:ffff:ffff", "2001:db8:1:0:ffff:ffff:ffff:ffff"],
    ["2001:db8:1::ffff:ffff:ffff:ffff", "2001:db8:1:0:ffff:ffff:ffff:ffff"],
    ["2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"],
    ["2001:0:0:1:0:0:0:1", "2001:0:0:1::1"],
    ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
    ["::", "::"],
    ["::1", "::1"],
    ["1::", "1::"],
    ["0:0:0:0:0:0:0:0", "::"],
    ["fe80:0:0:0:0:0:0:0", "fe80::"],
    ["::ffff:10.1.2.3", "10.1.2.3"],
    ["::FFFF:a01:203", "10.1.2.3"],
    ["0:0:0:0:0:ffff:10.1.2.3", "10.1.2.3"],
    ["::10.1.2.3", "::a01:203"],
    ["64:ff9b::192.0.2.33", "64:ff9b::c000:221"],
  ])("%s → %s", (input, expected) => {
    expect(canonicalAddress(input)).toBe(expected);
  });

  it.each([
    "",
    "10.0.0",
    "10.0.0.1.2",
    "10.0.0.256",
    "10.0.0.01",
    "010.0.0.1",
    "10.0.0.-1",
    " 10.0.0.1",
    "10.0.0.1 ",
    "10.0.0.1/24",
    "1:2:3:4:5:6:7:8:9",
    "1:2:3:4:5:6:7",
    "1::2::3",
    ":::",
    ":1::",
    "1::2:",
    "12345::",
    "fe80::1%eth0",
    "g::1",
    "::1.2.3",
    "1:2:3:4:5:6:7:1.2.3.4",
    "1.2.3.4::",
    "::ffff:1.2.3.256",
    "garbage",
  ])("rejects %j with INVALID_ADDRESS naming it", (input) => {
    let caught: unknown;
    try {
      canonicalAddress(input);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(IpamError);
    expect(caught).toMatchObject({ name: "IpamError", code: "INVALID_ADDRESS" });
    expect((caught as Error).message).toContain(JSON.stringify(input));
  });

  it("rejects non-strings", () => {
    expect(() => canonicalAddress(42 as unknown as string)).toThrow(
      expect.objectContaining({ code: "INVALID_ADDRESS" }),
    );
  });
});

describe("addressFamily", () => {
  it.each([
    ["10.0.0.1", 4],
    ["2001:db8::1", 6],
    ["::ffff:192.168.0.1", 4],
    ["::", 6],
  ])("%s is IPv%i", (ip, family) => {
    expect(addressFamily(ip)).toBe(family);
  });
});

describe("familyOfText", () => {
  it.each([
    ["10.0.0.1", "ipv4"],
    ["::ffff:192.168.0.1", "ipv4"],
    ["2001:DB8::1", "ipv6"],
    ["::", "ipv6"],
  ])("canonical %s is %s, as addressFamily says", (ip, family) => {
    const canonical = canonicalAddress(ip);
    expect(familyOfText(canonical)).toBe(family);
    expect(`ipv${addressFamily(canonical)}`).toBe(family);
  });

  it.each([
    ["10.0.0.0/24", "ipv4"],
    ["::ffff:10.0.0.0/120", "ipv4"],
    ["fd00::/64", "ipv6"],
  ])("canonical block %s is %s", (cidr, family) => {
    expect(familyOfText(canonicalCidr(cidr))).toBe(family);
  });
});

describe("canonicalCidr", () => {
  it.each([
    ["10.0.0.0/24", "10.0.0.0/24"],
    ["2001:DB8::/64", "2001:db8::/64"],
    ["0.0.0.0/0", "0.0.0.0/0"],
    ["::/0", "::/0"],
    ["::ffff:10.0.0.0/120", "10.0.0.0/24"],
    ["10.0.0.5/32", "10.0.0.5/32"],
  ])("%s → %s", (input, expected) => {
    expect(canonicalCidr(input)).toBe(expected);
  });

  it.each([
    ["10.0.0.0", "INVALID_ADDRESS"],
    ["10.0.0.0/33", "INVALID_ADDRESS"],
    ["10.0.0.0/024", "INVALID_ADDRESS"],
    ["10.0.0.0/", "INVALID_ADDRESS"],
    ["2001:db8::/129", "INVALID_ADDRESS"],
    ["::ffff:10.0.0.0/64", "INVALID_ADDRESS"],
    ["10.0.0.1/24", "HOST_BITS_SET"],
  ])("%s fails with %s", (input, code) => {
    expect(() => canonicalCidr(input)).toThrow(expect.objectContaining({ code }));
  });

  it("names the network address when host bits are set", () => {
    expect(() => canonicalCidr("192.168.127.0/23")).toThrow(/network address is 192\.168\.126\.0/);
  });
});
