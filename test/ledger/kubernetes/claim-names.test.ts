import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  addressOfClaimName,
  claimName,
  ledgerNameProblem,
  parseDuration,
} from "../../../provider/ledger/kubernetes/claim-names";
import { resolveLedger } from "../../../provider/resources/pool/ledger-option";
import { formatPrefix, hostMask } from "../../../provider/allocator/prefix";

// A Kubernetes object name (DNS-1123 subdomain), as the API server validates it.
const subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

describe("claimName", () => {
  it.each([
    ["10.0.8.5", "egress.10.0.8.5"],
    ["010.000.008.005", undefined], // not an address: refused, never a second spelling
    ["fd00::1", "egress.fd000000000000000000000000000001"],
    ["FD00:0:0::0001", "egress.fd000000000000000000000000000001"],
    ["::ffff:10.0.8.5", "egress.10.0.8.5"], // the allocator canonicalizes a mapped address to IPv4
    ["::", "egress.00000000000000000000000000000000"],
  ])("%s → %s", (ip, name) => {
    if (name === undefined) expect(() => claimName("egress", ip)).toThrow(/claimed address/);
    else expect(claimName("egress", ip)).toBe(name);
  });

  it("gives distinct addresses distinct names, each a valid object name", () => {
    const v6 = fc.bigInt(0n, (1n << 128n) - 1n).map((v) =>
      v
        .toString(16)
        .padStart(32, "0")
        .replace(/(.{4})(?!$)/g, "$1:"),
    );
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), v6), fc.oneof(fc.ipV4(), v6), (a, b) => {
        const [na, nb] = [claimName("a-pool", a), claimName("a-pool", b)];
        expect(na).toMatch(subdomain);
        expect(na.length).toBeLessThanOrEqual(253);
        const same =
          BigInt(`0x${na.split(".").slice(1).join("")}`) === BigInt(`0x${nb.split(".").slice(1).join("")}`);
        expect(na === nb).toBe(same || a === b);
      }),
    );
  });
});

describe("ledger option", () => {
  it.each([
    [{ kind: "kubernetes", name: "egress-prod", namespace: "ipam" }, []],
    [{ kind: "kubernetes", name: "Egress", namespace: "ipam" }, ["ledger.name"]],
    [{ kind: "etcd", name: "e", namespace: "ipam" }, ["ledger.kind"]],
    [
      { kind: "kubernetes", name: "e", namespace: "a_b", lockDuration: "10" },
      ["ledger.namespace", "ledger.lockDuration"],
    ],
    [
      { kind: "kubernetes", name: "e", namespace: "n", lockAcquireTimeout: "0s", context: "" },
      ["ledger.context", "ledger.lockAcquireTimeout"],
    ],
  ])("%j → failures %j", (value, properties) => {
    expect(resolveLedger(value).failures.map((f) => f.property)).toEqual(properties);
  });

  it("fills the default durations", () => {
    expect(
      resolveLedger({ kind: "kubernetes", name: "e", namespace: "n", context: "admin@prod" }).config,
    ).toEqual({
      name: "e",
      namespace: "n",
      context: "admin@prod",
      lockDuration: 10_000,
      lockAcquireTimeout: 30_000,
    });
  });

  it.each([
    ["10s", 10_000],
    ["1.5s", 1_500],
    ["500ms", 500],
    ["2m", 120_000],
  ])("duration %s = %d ms", (text, ms) => expect(parseDuration(text, "lockDuration")).toBe(ms));

  it("names a bad ledger name", () => {
    expect(ledgerNameProblem("x".repeat(41))).toContain("at most 40");
  });
});

describe("addressOfClaimName", () => {
  it.each([
    ["egress.10.0.8.5", "10.0.8.5"],
    ["egress.fd000000000000000000000000000001", "fd00::1"],
    ["egress.010.0.8.5", undefined], // not the name claimName gives any address
    ["egress.10.0.8", undefined],
    ["egress.handmade", undefined],
    ["other.10.0.8.5", undefined], // another pool's
    ["egress.FD000000000000000000000000000001", undefined],
  ])("%s -> %s", (name, ip) => {
    expect(addressOfClaimName("egress", name)).toBe(ip);
  });

  it("inverts claimName for every address", () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (ip) => {
        const name = claimName("egress", ip);
        expect(claimName("egress", addressOfClaimName("egress", name)!)).toBe(name);
      }),
    );
  });
});

describe("block claim names", () => {
  it.each([
    ["10.20.3.0/24", "egress.10.20.3.0-24"],
    ["10.20.3.64/26", "egress.10.20.3.64-26"],
    ["10.0.8.5/32", "egress.10.0.8.5-32"], // the block, not the address: "egress.10.0.8.5"
    ["0.0.0.0/0", "egress.0.0.0.0-0"],
    ["fd00::/64", "egress.fd000000000000000000000000000000-64"],
    ["FD00:0::/64", "egress.fd000000000000000000000000000000-64"],
    ["::ffff:10.20.3.0/120", "egress.10.20.3.0-24"], // a mapped block is the IPv4 block, as for addresses
  ])("%s → %s", (block, name) => {
    expect(claimName("egress", block)).toBe(name);
    expect(name).toMatch(subdomain);
  });

  it.each([
    ["10.20.3.1/24", /HOST_BITS_SET|not a network address/],
    ["10.20.3.0/33", /prefix length exceeds/],
    ["10.20.3.0/024", /not a number/],
  ])("refuses %s", (block, why) => {
    expect(() => claimName("egress", block)).toThrow(why);
  });

  it.each([
    ["egress.10.20.3.0-24", "10.20.3.0/24"],
    ["egress.fd000000000000000000000000000000-64", "fd00::/64"],
    ["egress.10.20.3.1-24", undefined], // host bits: no block has this name
    ["egress.10.20.3.0-33", undefined],
    ["egress.10.20.3.0-024", undefined],
    ["egress.10.20.3.0-", undefined],
    ["egress.10.20.3.0/24", undefined],
  ])("%s is the claim name of %s", (name, entry) => {
    expect(addressOfClaimName("egress", name)).toBe(entry);
  });

  it("round-trips every block, and no block shares a name with an address or another block", () => {
    const blockOf = (family: 4 | 6) =>
      fc
        .tuple(fc.bigInt(0n, (1n << (family === 4 ? 32n : 128n)) - 1n), fc.nat(family === 4 ? 32 : 128))
        .map(([v, length]) => formatPrefix(family, v & ~hostMask(family, length), length));
    const block = fc.oneof(blockOf(4), blockOf(6));
    fc.assert(
      fc.property(block, block, fc.oneof(fc.ipV4(), fc.ipV6()), (a, b, ip) => {
        const name = claimName("egress", a);
        expect(addressOfClaimName("egress", name)).toBe(a);
        expect(name === claimName("egress", b)).toBe(a === b);
        expect(name).not.toBe(claimName("egress", ip));
      }),
    );
  });
});
