// The quota rules of a shared pool: which group a stack counts in, what an entry costs, which rules
// are well formed, and what the refusal says.
import { describe, expect, it } from "vitest";
import {
  canonicalQuotas,
  entryCost,
  patternMatches,
  quotaExceeded,
  quotaGroupOf,
  quotaProblems,
} from "../../provider/ledger/quota-rules";

describe("quotaGroupOf", () => {
  const q = { default: 8, stacks: { "network/prod": 64, "team-a/*": 16, "*/*": 2, "acme/team-a/dev": 4 } };
  it.each([
    ["organization/network/prod", "stacks network/prod", 64],
    ["organization/team-a/prod", "stacks team-a/*", 16],
    ["acme/team-a/dev", "stacks acme/team-a/dev", 4], // three segments beat two with a star
    ["organization/team-a/dev", "stacks team-a/*", 16],
    ["organization/other/prod", "stacks */*", 2], // a pattern, however wide, beats the default
  ])("%s counts in %s with limit %d", (stack, key, limit) => {
    expect(quotaGroupOf(q, stack, "id-1")).toMatchObject({ key, limit });
  });

  it("counts a stack under the default by its identity, so two stacks of one name are two groups", () => {
    const d = { default: 3 };
    expect(quotaGroupOf(d, "organization/p/prod", "id-1")?.key).toBe("stack id-1");
    expect(quotaGroupOf(d, "organization/p/prod", "id-2")?.key).toBe("stack id-2");
    expect(quotaGroupOf(d, "organization/p/prod")?.key).toBe("stack organization/p/prod");
    expect(quotaGroupOf(d, "organization/p/prod", "id-1")?.rule).toBe("the default quota");
  });

  it("applies no limit without a default or a matching name", () => {
    expect(quotaGroupOf(undefined, "o/p/s", "id")).toBeUndefined();
    expect(quotaGroupOf({ stacks: { "a/b": 1 } }, "o/p/s", "id")).toBeUndefined();
  });

  it.each([
    ["p/s", "o/p/s", true],
    ["o/p/s", "o/p/s", true],
    ["x/p/s", "o/p/s", false],
    ["p/*", "o/p/s", true],
    ["*/s", "o/q/s", true],
    ["p/s", "o/p/t", false],
    ["p/s/t", "o/p/s", false],
  ])("pattern %s matches %s: %s", (pattern, stack, expected) => {
    expect(patternMatches(pattern, stack)).toBe(expected);
  });
});

describe("quotaProblems", () => {
  it.each([
    [{ default: 8, stacks: { "network/prod": 64, "team-a/*": 0 } }, []],
    [undefined, []],
    [{ default: -1 }, ["quotas.default"]],
    [{ default: 1.5 }, ["quotas.default"]],
    [{ default: "8" }, ["quotas.default"]],
    [{ stacks: { prod: 1 } }, ['quotas.stacks["prod"]']],
    [{ stacks: { "a/b/c/d": 1 } }, ['quotas.stacks["a/b/c/d"]']],
    [{ stacks: { "a/b c": 1 } }, ['quotas.stacks["a/b c"]']],
    [{ stacks: { "a/b": -2 } }, ['quotas.stacks["a/b"]']],
    [{ stacks: [] }, ["quotas.stacks"]],
    [{ limit: 3 }, ["quotas.limit"]],
    [7, ["quotas"]],
  ])("%j: problems at %j", (value, properties) => {
    expect(quotaProblems(value).map(([p]) => p)).toEqual(properties);
  });

  it("names the value and the form to use", () => {
    const [[, reason]] = quotaProblems({ stacks: { prod: 1 } }) as [[string, string]];
    expect(reason).toContain('"prod"');
    expect(reason).toContain('"project/stack"');
  });
});

describe("canonicalQuotas", () => {
  it("sorts the names and leaves out what is not set, so equal rules are equal text", () => {
    expect(canonicalQuotas({ stacks: { "b/s": 1, "a/s": 2 }, default: 3 })).toBe(
      '{"default":3,"stacks":{"a/s":2,"b/s":1}}',
    );
    expect(canonicalQuotas({})).toBeUndefined();
    expect(canonicalQuotas({ stacks: {} })).toBeUndefined();
    expect(canonicalQuotas({ default: 0 })).toBe('{"default":0}');
  });
});

describe("entryCost and the refusal", () => {
  it.each([
    ["10.0.0.5", 1n],
    ["10.20.3.0/24", 256n],
    ["2001:db8::/64", 2n ** 64n],
    ["fd00::1", 1n],
  ])("%s costs %s", (entry, cost) => expect(entryCost(entry)).toBe(cost));

  it("names the stack, the rule, the limit, who set it and the counts", () => {
    const group = quotaGroupOf({ stacks: { "team-a/*": 16 } }, "organization/team-a/dev", "id")!;
    const e = quotaExceeded(
      'pool "egress" (namespace "ipam")',
      "organization/team-a/dev",
      group,
      15n,
      2n,
      "stack o/net/prod (urn:p)",
    );
    expect(e.code).toBe("QUOTA_EXCEEDED");
    expect(e.message).toBe(
      'stack organization/team-a/dev is at quota "team-a/*" of pool "egress" (namespace "ipam"): 16 addresses ' +
        "(the stacks it matches count together), set by stack o/net/prod (urn:p); it holds 15 addresses and " +
        "this would add 2 addresses. Release addresses of the pool, or ask its owner to raise the quota",
    );
  });
});
