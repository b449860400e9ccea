// One table of behaviours every Ledger keeps, run against the stack ledger (stack-ledger.contract
// .test.ts) and the Kubernetes ledger on the real kube-apiserver (kube-ledger.contract.cluster
// .test.ts): the planning rules both are built on (provider/ledger/planner.ts) and what they add.
import { describe, expect, it } from "vitest";
import { isIpamError } from "../../provider/allocator";
import type { Chooser, Ledger, PlanRequest } from "../../provider/ledger/ledger";
import { poolChooser, resolvePool } from "../../provider/resources/pool/pool-spec";

/** A fresh, empty pool of a ledger: what each case of the contract starts from. */
export interface ContractPool {
  /** The ledger as one process of the pool's stack sees it. */
  ledger: Ledger;
  /** The same stack's ledger in another process (a fresh in-process book, the same durable record). */
  again: () => Ledger;
  /** The pool identity to pass to the ledger's methods. */
  pool: string;
}

const urn = (name: string) => `urn:pulumi:s::p::pulumi-nodejs:dynamic/egress-ipam:IpAllocation::${name}`;
const chooser = (spec: Parameters<typeof resolvePool>[0]): Chooser => {
  const { pool, failures } = resolvePool(spec);
  if (!pool) throw new Error(`bad contract pool: ${JSON.stringify(failures)}`);
  return poolChooser(pool);
};
const roundRobin = chooser({ ranges: [{ subnet: "10.9.0.0/29" }] }); // .2–.6 (gateway .1)
const lowestFree = chooser({ ranges: [{ subnet: "10.9.0.0/29" }], strategy: "lowest-free" });
const dualStack = chooser({
  cniConfig: JSON.stringify({
    cniVersion: "1.0.0",
    ipam: { type: "host-local", ranges: [[{ subnet: "10.9.1.0/29" }], [{ subnet: "fd00:9::/125" }]] },
  }),
});

const errorOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as Error & { code?: string },
  );

/** Registers the contract's cases for the ledger `name`, each on a pool from `fresh`. */
export function ledgerContract(name: string, fresh: () => Promise<ContractPool>): void {
  describe(`${name}: the Ledger contract`, () => {
    const req = (p: ContractPool, owner: string, more: Partial<PlanRequest> = {}): PlanRequest => ({
      pool: p.pool,
      owner: urn(owner),
      choose: roundRobin,
      ...more,
    });

    it("hands out the pool in round-robin order, one seq after another", async () => {
      const p = await fresh();
      const plans = [];
      for (const owner of ["a", "b", "c"]) plans.push(await p.ledger.plan(req(p, owner)));
      expect(plans).toEqual([
        { ips: ["10.9.0.2"], seq: 1 },
        { ips: ["10.9.0.3"], seq: 2 },
        { ips: ["10.9.0.4"], seq: 3 },
      ]);
    });

    it("gives an owner that plans again, in this process or another, the plan it has", async () => {
      const p = await fresh();
      const first = await p.ledger.plan(req(p, "a"));
      expect(await p.ledger.plan(req(p, "a"))).toEqual(first);
      await p.ledger.reserve(p.pool, urn("a"), first);
      expect(await p.again().plan(req(p, "a"))).toEqual(first);
      expect((await p.again().plan(req(p, "b"))).ips).toEqual(["10.9.0.3"]);
    });

    it("keeps one round-robin cursor per family in a dual-stack pool", async () => {
      const p = await fresh();
      const plans = [];
      for (const owner of ["a", "b", "c"]) {
        const plan = await p.ledger.plan(req(p, owner, { choose: dualStack, count: 2 }));
        await p.ledger.reserve(p.pool, urn(owner), plan);
        plans.push(plan);
      }
      expect(plans.map((x) => x.ips)).toEqual([
        ["10.9.1.2", "fd00:9::2"],
        ["10.9.1.3", "fd00:9::3"],
        ["10.9.1.4", "fd00:9::4"],
      ]);
      await p.ledger.release(p.pool, urn("b"));
      // Both families continue after the newest allocation, not at the address just freed.
      expect(await p.ledger.plan(req(p, "d", { choose: dualStack, count: 2 }))).toEqual({
        ips: ["10.9.1.5", "fd00:9::5"],
        seq: 4,
      });
    });

    it("gives requested addresses seq 0 and leaves the round-robin cursor where it was", async () => {
      const p = await fresh();
      await p.ledger.plan(req(p, "a"));
      expect(await p.ledger.plan(req(p, "pinned", { requested: ["10.9.0.5"] }))).toEqual({
        ips: ["10.9.0.5"],
        seq: 0,
      });
      expect(await p.ledger.plan(req(p, "b"))).toEqual({ ips: ["10.9.0.3"], seq: 2 });
    });

    it("refuses a requested address another owner holds, naming it and how to adopt; adopt takes it", async () => {
      const p = await fresh();
      const held = await p.ledger.plan(req(p, "a"));
      await p.ledger.reserve(p.pool, urn("a"), held);
      const err = await errorOf(p.ledger.plan(req(p, "b", { requested: held.ips })));
      expect(err?.code).toBe("IP_UNAVAILABLE");
      expect(err?.message).toContain(`requested address 10.9.0.2 in `);
      expect(err?.message).toContain(urn("a"));
      expect(err?.message).toContain("set adopt: true to take it over");
      const adopted = await p.ledger.plan(req(p, "b", { requested: held.ips, adopt: true }));
      await p.ledger.reserve(p.pool, urn("b"), adopted, true);
      expect((await p.ledger.holders(p.pool)).get("10.9.0.2")).toBe(urn("b"));
    });

    it("holds nothing of a plan that fails half way, and stays usable", async () => {
      const p = await fresh();
      const failing: Chooser = (taken, latest, i) => {
        if (i === 1) throw new Error("second family exhausted");
        return roundRobin(taken, latest, i);
      };
      await expect(p.ledger.plan(req(p, "dual", { choose: failing, count: 2 }))).rejects.toThrow(/exhausted/);
      expect((await p.ledger.holders(p.pool)).size).toBe(0);
      expect(await p.ledger.plan(req(p, "single"))).toEqual({ ips: ["10.9.0.2"], seq: 1 });
    });

    it("reports an exhausted pool as POOL_EXHAUSTED and plans again once an address is free", async () => {
      const p = await fresh();
      for (const owner of ["a", "b", "c", "d", "e"]) {
        const plan = await p.ledger.plan(req(p, owner, { choose: lowestFree }));
        await p.ledger.reserve(p.pool, urn(owner), plan);
      }
      const err = await errorOf(p.ledger.plan(req(p, "f", { choose: lowestFree })));
      expect(isIpamError(err, "POOL_EXHAUSTED")).toBe(true);
      await p.ledger.release(p.pool, urn("c"));
      expect((await p.ledger.plan(req(p, "f", { choose: lowestFree }))).ips).toEqual(["10.9.0.4"]);
    });

    it("releases only what the owner holds", async () => {
      const p = await fresh();
      const a = await p.ledger.plan(req(p, "a"));
      await p.ledger.reserve(p.pool, urn("a"), a);
      await p.ledger.release(p.pool, urn("b"), a.ips);
      expect((await p.ledger.holders(p.pool)).get("10.9.0.2")).toBe(urn("a"));
      await p.ledger.release(p.pool, urn("a"));
      expect((await p.ledger.holders(p.pool)).has("10.9.0.2")).toBe(false);
    });

    it("plans ahead in program order whatever order the checks come in, skipping what its own check must say", async () => {
      const p = await fresh();
      const kept = await p.ledger.plan(req(p, "kept"));
      await p.ledger.reserve(p.pool, urn("kept"), kept);
      const blocker = await p.ledger.plan(req(p, "blocker", { requested: ["10.9.0.4"] }));
      await p.ledger.reserve(p.pool, urn("blocker"), blocker);
      const program = [
        req(p, "kept"),
        req(p, "x"),
        req(p, "conflicting", { requested: ["10.9.0.4"] }), // blocker's: skipped, its check says so
        req(p, "y"),
      ];
      await p.ledger.planAhead(program);
      // y's own check arrives first and gets what planning ahead gave it, after x.
      expect(await p.ledger.plan(program[3]!)).toEqual({ ips: ["10.9.0.5"], seq: 3 });
      expect(await p.ledger.plan(program[1]!)).toEqual({ ips: ["10.9.0.3"], seq: 2 });
      expect(await p.ledger.plan(program[0]!)).toEqual(kept);
      expect((await errorOf(p.ledger.plan(program[2]!)))?.code).toBe("IP_UNAVAILABLE");
    });
  });
}
