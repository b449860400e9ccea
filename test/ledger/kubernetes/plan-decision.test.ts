// The planning decision of a shared pool, case by case: what it plans and what it would write,
// against claims as a view has them (no server).
import { describe, expect, it } from "vitest";
import type { Claim, ClaimFields } from "../../../provider/ledger/kubernetes/claim-store";
import { decidePlan, withRecords, type Planning } from "../../../provider/ledger/kubernetes/plan-decision";
import { poolChooser, resolvePool } from "../../../provider/resources/pool/pool-spec";
import { nextFreeBlock, type ReadonlyAddressSet } from "../../../provider/allocator";

const now = 1_000_000;
const me = { stack: "o/p/s", stackId: "stack-me" };
const urn = (n: string) => `urn:pulumi:s::p::egress-ipam:IpAllocation::${n}`;
const planning: Planning = {
  me,
  what: 'pool "egress"',
  hold: (owner: string, seq: number): ClaimFields => ({
    state: "hold",
    stack: me.stack,
    stackId: me.stackId,
    owner,
    seq,
    expires: now + 60_000,
  }),
};
const choose = poolChooser(resolvePool({ ranges: [{ subnet: "10.9.0.0/29" }] }).pool!);
const claim = (ip: string, owner: string, more: Partial<Claim> = {}): Claim => ({
  ip,
  state: "claim",
  stack: me.stack,
  stackId: me.stackId,
  owner: urn(owner),
  seq: 1,
  expires: 0,
  resourceVersion: "7",
  uid: `u-${ip}`,
  ...more,
});
const other = { stack: "o/p/t", stackId: "stack-other" };

describe("decidePlan", () => {
  it.each([
    ["an adopted claim of the stack (a rename at preview)", [claim("10.9.0.2", "web")], { adopt: true }],
    ["the owner's own claim", [claim("10.9.0.2", "web2")], {}],
  ])("plans %s without writing over it", (_, claims, more) => {
    const staged = decidePlan(
      { pool: "p", owner: urn("web2"), requested: ["10.9.0.2"], choose, ...more },
      claims,
      now,
      planning,
    );
    expect(staged.plan.ips).toEqual(["10.9.0.2"]);
    expect(staged.writes).toEqual([]);
  });

  it("takes over a lapsed hold of another stack, naming whose it was", () => {
    const lapsed = claim("10.9.0.2", "x", { ...other, state: "hold", expires: now - 1 });
    const staged = decidePlan({ pool: "p", owner: urn("web"), count: 1, choose }, [lapsed], now, planning);
    expect(staged.plan.ips).toEqual(["10.9.0.2"]);
    expect(staged.writes).toEqual([
      {
        ip: "10.9.0.2",
        existing: lapsed,
        fields: expect.objectContaining({ state: "hold", takenFrom: `stack-other ${urn("x")}` }),
      },
    ]);
  });

  it.each([
    [
      "a claim of another stack, even with adopt",
      claim("10.9.0.2", "x", other),
      true,
      /adopt takes over addresses of this stack only/,
    ],
    [
      "a claim of another resource of the stack, without adopt",
      claim("10.9.0.2", "x"),
      false,
      /held by .*::x.*set adopt: true/,
    ],
  ])("refuses %s", (_, existing, adopt, message) => {
    expect(() =>
      decidePlan(
        { pool: "p", owner: urn("web"), requested: ["10.9.0.2"], adopt, choose },
        [existing],
        now,
        planning,
      ),
    ).toThrow(message);
  });

  it("plans anew for an owner whose hold the pool no longer hands out, naming it and releasing the old hold", () => {
    // Planned at preview from 10.9.0.0/29; the owner excluded 10.9.0.2 since (issue #56).
    const held = claim("10.9.0.2", "web", { state: "hold", expires: now - 1 });
    const now2 = poolChooser(
      resolvePool({ ranges: [{ subnet: "10.9.0.0/29" }], exclude: ["10.9.0.2"] }).pool!,
    );
    const staged = decidePlan(
      { pool: "p", owner: urn("web"), count: 1, choose: now2 },
      [held],
      now,
      planning,
      new Map([["10.9.0.2", "10.9.0.2 is excluded"]]),
    );
    expect(staged.plan.ips).toEqual(["10.9.0.3"]);
    expect(staged.fresh).toBe(true);
    expect(staged.outdated).toEqual([{ ip: "10.9.0.2", reason: "10.9.0.2 is excluded" }]);
    expect(staged.release).toEqual([held]);
    expect(staged.writes.map((w) => [w.ip, w.existing, w.fields.state])).toEqual([
      ["10.9.0.3", undefined, "hold"],
    ]);
  });

  it("never weakens the owner's claim because of what the pool says now: only holds are planned anew", () => {
    const claimed = claim("10.9.0.2", "web");
    const staged = decidePlan(
      { pool: "p", owner: urn("web"), count: 1, choose },
      [claimed],
      now,
      planning,
      new Map([["10.9.0.2", "10.9.0.2 is excluded"]]),
    );
    expect(staged.plan.ips).toEqual(["10.9.0.2"]);
    expect(staged.outdated).toBeUndefined();
    expect(staged.writes).toEqual([]);
  });

  it("renews the owner's holds, and writes nothing for a hold not yet written (no resourceVersion)", () => {
    const held = claim("10.9.0.3", "web", { state: "hold", expires: now + 5 });
    const staged = decidePlan({ pool: "p", owner: urn("web"), count: 1, choose }, [held], now, planning);
    expect(staged.fresh).toBe(false);
    expect(staged.writes.map((w) => [w.ip, w.fields.expires])).toEqual([["10.9.0.3", now + 60_000]]);
    const unwritten = { ...held, resourceVersion: "" };
    expect(
      decidePlan({ pool: "p", owner: urn("web"), count: 1, choose }, [unwritten], now, planning).writes,
    ).toEqual([]);
  });
});

describe("withRecords", () => {
  it("adds the state's records where no live claim is, as claims nobody writes over, and keeps live claims", () => {
    const live = claim("10.9.0.2", "x", other);
    const lapsed = claim("10.9.0.4", "y", { ...other, state: "hold", expires: now - 1 });
    const records = [
      { pool: "p", owner: urn("a"), ips: ["10.9.0.2"], seq: 1 }, // another stack's claim wins: refresh reports it
      { pool: "p", owner: urn("b"), ips: ["10.9.0.3"], seq: 2 },
      { pool: "p", owner: urn("c"), ips: ["10.9.0.4"], seq: 3 },
    ];
    const merged = withRecords([live, lapsed], records, now, planning);
    expect(merged.map((c) => [c.ip, c.owner, c.state, c.resourceVersion]).sort()).toEqual([
      ["10.9.0.2", urn("x"), "claim", "7"],
      ["10.9.0.3", urn("b"), "claim", ""],
      ["10.9.0.4", urn("c"), "claim", ""],
    ]);
    // A new holder is planned around them, after the newest record in the pool's order.
    const staged = decidePlan({ pool: "p", owner: urn("d"), count: 1, choose }, merged, now, planning);
    expect(staged.plan).toEqual({ ips: ["10.9.0.5"], seq: 4 });
  });

  it("gives a claim of the stack to the resource whose state carries its instance, not to the name it was made under", () => {
    // `web` was renamed `web2` with an alias: web2's record still names web, its claim too.
    const renamed = claim("10.9.0.2", "web", { instance: "i-web" });
    const records = [{ pool: "p", owner: urn("web2"), ips: ["10.9.0.2"], seq: 1, instance: "i-web" }];
    const merged = withRecords([renamed], records, now, planning);
    expect(merged.map((c) => [c.ip, c.owner, c.resourceVersion])).toEqual([["10.9.0.2", urn("web2"), "7"]]);
    // A new resource given the freed name is another holder: it plans another address.
    const staged = decidePlan({ pool: "p", owner: urn("web"), count: 1, choose }, merged, now, planning);
    expect(staged.plan.ips).not.toContain("10.9.0.2");
    // Another stack's claim with a matching instance stays as it is.
    const theirs = claim("10.9.0.2", "web", { ...other, instance: "i-web" });
    expect(withRecords([theirs], records, now, planning)[0]!.owner).toBe(urn("web"));
  });
});

describe("decidePlan with blocks", () => {
  // Blocks come from the range, all of 10.20.0.0/22: the subnet's gateway is outside it.
  const rangeSet = resolvePool({
    ranges: [
      { subnet: "10.20.0.0/21", rangeStart: "10.20.0.0", rangeEnd: "10.20.3.255", gateway: "10.20.7.254" },
    ],
  }).pool!.rangeSets[0]!;
  const blocksOf =
    (prefixLength: number) =>
    (taken: ReadonlyAddressSet, latest: readonly string[]): string =>
      nextFreeBlock({ rangeSet, prefixLength, taken, cursor: latest.at(-1), strategy: "lowest-free" });
  const liveBlocks = [
    claim("10.20.0.0/24", "net-a", other),
    claim("10.20.1.64/26", "net-b", { ...other, state: "hold", expires: now + 5 }),
    claim("10.20.2.9", "web", other),
    claim("10.20.3.0/24", "gone", { ...other, state: "hold", expires: now - 1 }), // lapsed: free
  ];

  it.each([
    [26, "10.20.1.0/26"], // /24 taken whole, the /26 next to the held one
    [25, "10.20.1.128/25"],
    [24, "10.20.3.0/24"], // a lapsed hold of a block is free; 10.20.2.0/24 has an address held
    [23, "10.20.2.0/23"],
  ])("plans an automatic /%d around the held entries: %s", (length, block) => {
    const staged = decidePlan(
      { pool: "p", owner: urn("net"), count: 1, choose: blocksOf(length) },
      length === 23 ? liveBlocks.slice(0, 2) : liveBlocks,
      now,
      planning,
    );
    expect(staged.plan.ips).toEqual([block]);
    expect(staged.writes.map((w) => [w.ip, w.fields.state])).toEqual([[block, "hold"]]);
  });

  it.each([
    [
      "10.20.0.0/25",
      /requested block 10.20.0.0\/25 .* overlaps what is held by .*net-a of stack o\/p\/t \(10.20.0.0\/24\)/,
    ],
    ["10.20.0.5", /requested address 10.20.0.5 .* is held by .*net-a.* \(10.20.0.0\/24\)/], // an address inside a block
    ["10.20.2.0/24", /overlaps what is held by .*::web of stack o\/p\/t \(10.20.2.9\)/], // a block around an address
    ["10.20.1.0/24", /net-b.*planned, not yet created.*\(10.20.1.64\/26\)/], // a live hold counts
  ])("refuses %s, naming the overlapping holder", (requested, message) => {
    expect(() =>
      decidePlan({ pool: "p", owner: urn("net"), requested: [requested], choose }, liveBlocks, now, planning),
    ).toThrow(message);
  });

  it.each([
    [
      "the same block of another resource of the stack",
      claim("10.20.0.0/24", "old"),
      "10.20.0.0/24",
      undefined,
    ],
    [
      "a block around it, of the stack",
      claim("10.20.0.0/24", "old"),
      "10.20.0.0/25",
      /overlaps what is held by/,
    ],
    [
      "a block inside it, of the stack",
      claim("10.20.0.0/26", "old"),
      "10.20.0.0/24",
      /overlaps what is held by/,
    ],
  ])("with adopt, takes over %s, never a part of one", (_, held, requested, refusal) => {
    const req = { pool: "p", owner: urn("net"), requested: [requested], adopt: true, choose };
    if (refusal) expect(() => decidePlan(req, [held], now, planning)).toThrow(refusal);
    else expect(decidePlan(req, [held], now, planning).writes).toEqual([]); // a claim: taken over at create
  });
});
