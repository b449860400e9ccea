// A shared pool's `prefixLengths` rule is bounded in width (issue #56 item 4): every address of the
// pool registers in a marker at each length from `min` to `max`, so the width is the number of
// marker writes an address costs at preview and again at release.
import { describe, expect, it } from "vitest";
import { ipPoolProvider } from "../../../provider/resources/ip-pool/ip-pool-provider";
import { resolvePool, type PoolSpec } from "../../../provider/resources/pool/pool-spec";
import { sharedRuleProblems } from "../../../provider/resources/pool/shared-rule-width";

const ledger = { kind: "kubernetes", name: "egress", namespace: "ipam" };
const v4 = (rule: PoolSpec["prefixLengths"]) => ({ ranges: [{ subnet: "10.0.0.0/8" }], prefixLengths: rule });
const v6 = (rule: PoolSpec["prefixLengths"]) => ({
  ranges: [{ subnet: "2001:db8::/32" }],
  prefixLengths: rule,
});
const dual = (rule: PoolSpec["prefixLengths"]) => ({
  ranges: [{ subnet: "10.0.0.0/8" }, { subnet: "2001:db8::/32" }],
  prefixLengths: rule,
});

describe("the width of a shared pool's prefix rule", () => {
  it.each([
    ["IPv4 /24 to /32", v4({ min: 24, max: 32 }), []],
    ["IPv4 /24 to /27", v4({ min: 24, max: 27 }), []],
    ["IPv6 /56 to /64", v6({ min: 56, max: 64 }), []],
    ["a rule without max (no markers)", v4({ min: 8 }), []],
    ["a rule without min (no markers)", v4({ max: 32 }), []],
    ["IPv4 /16 to /28", v4({ min: 16, max: 28 }), ["IPv4 /16 to /28: 13 prefix lengths, width 12"]],
    ["IPv6 /48 to /64", v6({ min: 48, max: 64 }), ["IPv6 /48 to /64: 17 prefix lengths, width 16"]],
    // IPv4 addresses register at /24 to /32 only (9 lengths); IPv6 ones at all 17.
    ["dual stack /24 to /40", dual({ min: 24, max: 40 }), ["IPv6 /24 to /40: 17 prefix lengths, width 16"]],
    [
      "dual stack /16 to /40",
      dual({ min: 16, max: 40 }),
      ["IPv4 /16 to /32: 17 prefix lengths, width 16", "IPv6 /16 to /40: 25 prefix lengths, width 24"],
    ],
  ])("%s", (_, spec, expected) => {
    const { pool } = resolvePool(spec);
    const problems = sharedRuleProblems(pool!);
    expect(problems).toHaveLength(expected.length);
    expected.forEach((text, i) => expect(problems[i]).toContain(text));
  });

  it("refuses a wide rule of a shared pool at check, naming the rule, the width, the limit and what to set", async () => {
    const { failures } = await ipPoolProvider.check({}, { ...v6({ min: 48, max: 64, default: 56 }), ledger });
    expect(failures).toHaveLength(1);
    expect(failures![0]).toMatchObject({ property: "prefixLengths", code: "INVALID_INPUT" });
    expect(failures![0]!.reason).toBe(
      "the rule's IPv6 /48 to /64: 17 prefix lengths, width 16: a shared pool's rule may be at " +
        "most 8 wide (max - min), since every address registers in the marker of the block around it at " +
        "each length from min to max (17 writes at preview and 17 at release, besides its own claim): " +
        "narrow it, e.g. prefixLengths: { min: 56, max: 64 } (min the largest block the pool hands out)",
    );
  });

  it("leaves the rule of a pool that is not shared alone (it writes no markers)", async () => {
    const { failures } = await ipPoolProvider.check({}, v6({ min: 48, max: 64, default: 56 }));
    expect(failures ?? []).toEqual([]);
  });
});
