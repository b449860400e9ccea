import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Claim } from "../../provider/ledger/kubernetes/claim-store";
import type { StoredDefinition } from "../../provider/ledger/kubernetes/pool-definition";
import { entryCost, type PoolQuotas } from "../../provider/ledger/quota-rules";
import { usage } from "../../provider/cli/pool-usage";
import { poolOwner, usageByStack, type StackUsage } from "../../provider/cli/quota-usage";
import { report } from "../../provider/cli/report-command";
import { quotasText, stacksText } from "../../provider/cli/report-text";
import { poolOfDefinition } from "../../provider/resources/pool/canonical-definition";
import { styleFor } from "../../provider/cli/style";

const NOW = Date.parse("2026-03-01T12:00:00Z");
const OWNER_URN = "urn:pulumi:prod::net::pulumi-nodejs:dynamic/egress-ipam:IpPool::egress";
const definition = JSON.stringify({
  ranges: [
    [{ subnet: "10.60.0.0/16", rangeStart: "10.60.0.1", rangeEnd: "10.60.255.254", gateway: "10.60.0.1" }],
  ],
  exclude: [],
  reserved: [],
  strategy: "round-robin",
});

const stored = (quotas?: PoolQuotas, ownerStackId: string | undefined = "stack-owner"): StoredDefinition => ({
  definition,
  stack: "acme/net/prod",
  owner: OWNER_URN,
  format: 1,
  ...(ownerStackId ? { ownerStackId } : {}),
  ...(quotas ? { quotas } : {}),
  resourceVersion: "1",
});

let n = 0;
/** A claim (held) or hold (planned; lapsed when `expires` is in the past) of `stack`. */
const entry = (
  stack: string,
  stackId: string | undefined,
  ip: string,
  extra: Partial<Claim> = {},
): Claim => ({
  ip,
  state: "claim",
  stack,
  ...(stackId ? { stackId } : {}),
  owner: `urn:pulumi:x::y::pulumi-nodejs:dynamic/egress-ipam:IpAllocation::a${n++}`,
  seq: 1,
  expires: 0,
  resourceVersion: "1",
  uid: "u",
  ...extra,
});
const hold = (expires = NOW + 60_000) => ({ state: "hold" as const, expires });

/** Three stacks and the owner: two of team-a (a pattern), one under the default. */
const claims: Claim[] = [
  entry("acme/net/prod", "stack-owner", "10.60.0.2"),
  entry("acme/team-a/dev", "stack-dev", "10.60.0.3"),
  entry("acme/team-a/dev", "stack-dev", "10.60.1.0/29"),
  entry("acme/team-a/dev", "stack-dev", "10.60.0.4", hold()),
  entry("acme/team-a/test", "stack-test", "10.60.0.5"),
  entry("acme/web/prod", "stack-web", "10.60.0.6"),
  entry("acme/web/prod", "stack-web", "10.60.0.7"),
  // A lapsed hold, a node address and an object that is no claim: none counts.
  entry("acme/web/prod", "stack-web", "10.60.0.8", hold(NOW - 1)),
  entry("acme/web/prod", "stack-web", "10.60.0.9", { nodeId: "node-a" }),
  entry("", undefined, "10.60.0.10", { malformed: "ConfigMap x, which is not a valid claim" }),
];
const quotas: PoolQuotas = { default: 4, stacks: { "team-a/*": 16 } };

const row = (rows: StackUsage[], stack: string) => rows.filter((r) => r.stack === stack);

describe("usageByStack", () => {
  const rows = usageByStack(stored(quotas), claims, NOW);

  it.each<[string, Partial<StackUsage>]>([
    ["acme/net/prod", { owner: true, held: "1", planned: "0", quota: { limit: "4", used: "1" } }],
    // A /29 costs its 8 addresses; a live hold is planned; the pattern's stacks count together.
    ["acme/team-a/dev", { held: "9", planned: "1", quota: { pattern: "team-a/*", limit: "16", used: "11" } }],
    [
      "acme/team-a/test",
      { held: "1", planned: "0", quota: { pattern: "team-a/*", limit: "16", used: "11" } },
    ],
    ["acme/web/prod", { held: "2", planned: "0", quota: { limit: "4", used: "2" } }],
  ])("%s", (stack, expected) => {
    expect(row(rows, stack)).toEqual([{ stack, stackId: expect.any(String), ...expected }]);
  });

  it("lists the stacks by name, leaving out node addresses, lapsed holds and objects that are no claim", () => {
    expect(rows.map((r) => r.stack)).toEqual([
      "acme/net/prod",
      "acme/team-a/dev",
      "acme/team-a/test",
      "acme/web/prod",
    ]);
  });

  it("without quotas, every stack is listed with no quota", () => {
    expect(usageByStack(stored(), claims, NOW).map((r) => r.quota)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("lists the owner with nothing held when it has no claims", () => {
    expect(usageByStack(stored(quotas), claims.slice(1), NOW)[0]).toEqual({
      stack: "acme/net/prod",
      stackId: "stack-owner",
      owner: true,
      held: "0",
      planned: "0",
      quota: { limit: "4", used: "0" },
    });
  });

  it("tells two stacks of one name apart by identity, each under its own default quota", () => {
    const twins = [
      entry("organization/app/prod", "stack-aaaa", "10.60.0.2"),
      entry("organization/app/prod", "stack-bbbb", "10.60.0.3"),
      entry("organization/app/prod", "stack-bbbb", "10.60.0.4"),
    ];
    expect(usageByStack(stored({ default: 2 }), twins, NOW).filter((r) => !r.owner)).toEqual([
      {
        stack: "organization/app/prod",
        stackId: "stack-aaaa",
        held: "1",
        planned: "0",
        quota: { limit: "2", used: "1" },
      },
      {
        stack: "organization/app/prod",
        stackId: "stack-bbbb",
        held: "2",
        planned: "0",
        quota: { limit: "2", used: "2" },
      },
    ]);
  });

  it("counts claims of an earlier version (no identity) for the one identity of their name", () => {
    const mixed = [
      entry("acme/web/prod", "stack-web", "10.60.0.2"),
      entry("acme/web/prod", undefined, "10.60.0.3"),
    ];
    expect(row(usageByStack(stored(), mixed, NOW), "acme/web/prod")).toEqual([
      { stack: "acme/web/prod", stackId: "stack-web", held: "2", planned: "0" },
    ]);
  });

  it("an owner recorded by name only (an earlier version's definition) is the stack of that name", () => {
    const rows = usageByStack(stored(undefined, undefined), claims, NOW);
    expect(rows.filter((r) => r.owner).map((r) => r.stack)).toEqual(["acme/net/prod"]);
  });

  it("counts an IPv6 /64 exactly, beyond 2^53", () => {
    const v6 = [
      entry("acme/v6/prod", "stack-v6", "fd00:1::/64"),
      entry("acme/v6/prod", "stack-v6", "fd00:2::/64"),
    ];
    expect(row(usageByStack(stored({ default: 8 }), v6, NOW), "acme/v6/prod")[0]).toMatchObject({
      held: (2n ** 65n).toString(),
      quota: { limit: "8", used: (2n ** 65n).toString() },
    });
  });

  it("property: the rows hold exactly the live stack entries, and a group uses what its stacks hold and plan", () => {
    const stacks = ["o/a/x", "o/a/y", "o/b/x", "p/a/x"];
    const arb = fc.array(
      fc.record({
        stack: fc.integer({ min: 0, max: 3 }),
        idless: fc.boolean(),
        host: fc.integer({ min: 2, max: 250 }),
        block: fc.boolean(),
        state: fc.constantFrom("claim", "live hold", "lapsed hold", "node"),
      }),
      { maxLength: 30 },
    );
    fc.assert(
      fc.property(arb, (specs) => {
        const cs = specs.map((s) => {
          const stack = stacks[s.stack]!;
          const ip = s.block ? `10.${s.host}.0.0/24` : `10.60.0.${s.host}`;
          const extra: Partial<Claim> =
            s.state === "live hold"
              ? hold()
              : s.state === "lapsed hold"
                ? hold(NOW - 1)
                : s.state === "node"
                  ? { nodeId: "n" }
                  : {};
          return entry(stack, s.idless ? undefined : `id-${stack}`, ip, extra);
        });
        const rows = usageByStack(stored({ default: 300, stacks: { "a/*": 1000 } }), cs, NOW);
        const counted = cs.filter((c) => c.nodeId === undefined && (c.state === "claim" || c.expires > NOW));
        const total = (f: (r: StackUsage) => string) => rows.reduce((s, r) => s + BigInt(f(r)), 0n);
        expect(total((r) => r.held) + total((r) => r.planned)).toBe(
          counted.reduce((s, c) => s + entryCost(c.ip), 0n),
        );
        const group = rows.filter((r) => r.quota?.pattern === "a/*");
        for (const r of group)
          expect(r.quota!.used).toBe(
            group.reduce((s, g) => s + BigInt(g.held) + BigInt(g.planned), 0n).toString(),
          );
        for (const r of rows.filter((x) => x.quota && x.quota.pattern === undefined))
          expect(r.quota!.used).toBe((BigInt(r.held) + BigInt(r.planned)).toString());
      }),
    );
  });
});

describe("the stacks in report --ledger", () => {
  const plain = styleFor({ isTTY: false }, {});
  const ledgerUsageOf = (q?: PoolQuotas, cs: Claim[] = claims) => {
    const s = stored(q);
    return {
      ...usage("kubernetes:ipam/egress", "egress", poolOfDefinition(definition), []),
      ownedBy: poolOwner(s),
      ...(q ? { quotas: q } : {}),
      stacks: usageByStack(s, cs, NOW),
    };
  };
  const scope = { kind: "ledger" as const, name: "kubernetes:ipam/egress" };

  it("text: the owner, the quotas, a line per stack with its rule, and the pattern's total", () => {
    const text = report(scope, [ledgerUsageOf(quotas)], {}, plain).split("\n");
    expect(text.slice(0, 11)).toEqual([
      "pool egress  kubernetes:ipam/egress",
      `  owner     stack acme/net/prod (${OWNER_URN})`,
      "  range     10.60.0.1-10.60.255.254 in 10.60.0.0/16, gateway 10.60.0.1",
      "  strategy  round-robin",
      '  quotas    default 4, "team-a/*" 16',
      "  size 65533  held 0  free 65533  planned-not-created 0  reserved 0  excluded 0",
      "",
      "  STACK                  QUOTA                     HELD  PLANNED  LEFT",
      "  acme/net/prod (owner)  default 4                 1     0        3",
      '  acme/team-a/dev        "team-a/*" 16 (together)  9     1        5',
      '  acme/team-a/test       "team-a/*" 16 (together)  1     0        5',
    ]);
    expect(text.slice(11, 13)).toEqual([
      "  acme/web/prod          default 4                 2     0        2",
      '  "team-a/*" together (2 stacks): held 10  planned 1  of 16  left 5',
    ]);
  });

  it.each<[string, StoredDefinition, Claim[], string[]]>([
    [
      "no quotas: each stack without one",
      stored(),
      claims.slice(0, 2),
      [
        "  STACK                  QUOTA     HELD  PLANNED  LEFT",
        "  acme/net/prod (owner)  no quota  1     0        -",
        "  acme/team-a/dev        no quota  1     0        -",
      ],
    ],
    [
      "a group over a lowered quota",
      stored({ stacks: { "team-a/*": 2 } }),
      claims.slice(1, 5),
      [
        "  STACK                  QUOTA                    HELD  PLANNED  LEFT",
        "  acme/net/prod (owner)  no quota                 0     0        -",
        '  acme/team-a/dev        "team-a/*" 2 (together)  9     1        over by 9',
        '  acme/team-a/test       "team-a/*" 2 (together)  1     0        over by 9',
        '  "team-a/*" together (2 stacks): held 10  planned 1  of 2  over by 9',
      ],
    ],
    [
      "two stacks of one name (and claims of an earlier version of it), by a short identity",
      { ...stored({ default: 1 }), stack: "acme/other/x" },
      [
        entry("acme/net/prod", "stack-0123456789abcdef01234567", "10.60.0.2"),
        entry("acme/net/prod", "stack-fedcba9876543210fedcba98", "10.60.0.3"),
        entry("acme/net/prod", undefined, "10.60.0.4"),
      ],
      [
        "  STACK                            QUOTA      HELD  PLANNED  LEFT",
        "  acme/net/prod (no identity)      default 1  1     0        0",
        "  acme/net/prod (stack-01234567…)  default 1  1     0        0",
        "  acme/net/prod (stack-fedcba98…)  default 1  1     0        0",
        "  acme/other/x (owner)             default 1  0     0        1",
      ],
    ],
  ])("%s", (_what, definition, cs, lines) => {
    expect(stacksText(usageByStack(definition, cs, NOW))).toEqual(lines);
  });

  it.each<[PoolQuotas | undefined, string]>([
    [undefined, "none (no stack is limited)"],
    [{ stacks: { "b/*": 3, "a/x": 1 } }, '"a/x" 1, "b/*" 3'],
    [{ default: 0 }, "default 0"],
  ])("quotas %j read %s", (q, text) => {
    expect(quotasText(q)).toBe(text);
  });

  it("--json: the owner, the quotas as set, and every stack with its counts as decimal strings", () => {
    const doc = JSON.parse(report(scope, [ledgerUsageOf(quotas)], { json: true }, plain));
    expect(doc.pools[0].ownedBy).toEqual({ stack: "acme/net/prod", stackId: "stack-owner", pool: OWNER_URN });
    expect(doc.pools[0].quotas).toEqual(quotas);
    expect(doc.pools[0].stacks[1]).toEqual({
      stack: "acme/team-a/dev",
      stackId: "stack-dev",
      held: "9",
      planned: "1",
      quota: { pattern: "team-a/*", limit: "16", used: "11" },
    });
  });
});
