import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  addressOfClaimName,
  claimName,
  ledgerNameProblem,
  parseDuration,
} from "../../../provider/ledger/kubernetes/claim-names";
import { resolveLedger } from "../../../provider/resources/pool/ledger-option";

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
