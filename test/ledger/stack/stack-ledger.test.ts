import { describe, expect, it } from "vitest";
import { isIpamError, nextFree, RangeSet, type AllocationStrategy } from "../../../provider/allocator";
import type { Chooser } from "../../../provider/ledger/ledger";
import { stackLedger } from "../../../provider/ledger/stack/stack-ledger";
import type { CheckpointResource } from "../../../provider/ledger/stack/stack-checkpoint";

let n = 0;
// Each test gets its own stack name: the ledger's books are process-wide by design.
const freshStack = () => `org/proj/ledger-${n++}`;
const POOL = "urn:pulumi:s::p::pulumi-nodejs:dynamic/egress-ipam:IpPool::pool";

const chooser =
  (subnet: string, strategy: AllocationStrategy = "round-robin"): Chooser =>
  (taken, latest) =>
    nextFree({ rangeSet: new RangeSet([{ subnet }]), taken, cursor: latest.at(-1), strategy });

const holder = (owner: string, ips: string[], seq: number, pool = POOL) => ({
  allocation: { pool, owner, ips, seq },
});

describe("stack ledger: concurrency in one process", () => {
  it("hands out thousands of concurrent plans without a duplicate", async () => {
    const ledger = stackLedger({ stack: freshStack(), load: async () => [] });
    const choose = chooser("10.0.0.0/20");
    const plans = await Promise.all(
      Array.from({ length: 3000 }, (_, i) => ledger.plan({ pool: POOL, owner: `o${i}`, choose })),
    );
    const ips = plans.flatMap((p) => p.ips);
    expect(ips).toHaveLength(3000);
    expect(new Set(ips).size).toBe(3000);
    expect((await ledger.holders(POOL)).size).toBe(3000);
  });

  it("keeps the lock usable after chooser errors (pool exhausted)", async () => {
    const ledger = stackLedger({ stack: freshStack(), load: async () => [] });
    const choose = chooser("10.1.0.0/28"); // 13 addresses: .2-.14 (gateway .1 skipped)
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => ledger.plan({ pool: POOL, owner: `o${i}`, choose })),
    );
    const ok = results.filter((r) => r.status === "fulfilled");
    const failed = results.filter((r) => r.status === "rejected");
    expect(ok).toHaveLength(13);
    expect(failed.every((r) => isIpamError(r.reason, "POOL_EXHAUSTED"))).toBe(true);
    await ledger.release(POOL, "o0");
    const again = await ledger.plan({ pool: POOL, owner: "late", choose });
    expect(again.ips).toHaveLength(1);
  });

  it("holds nothing of a plan that fails half way (a dual-stack pool with one family exhausted)", async () => {
    const ledger = stackLedger({ stack: freshStack(), load: async () => [] });
    const first = chooser("10.5.0.0/24");
    const choose: Chooser = (taken, latest, i) => {
      if (i === 1) throw new Error("second family exhausted");
      return first(taken, latest, i);
    };
    await expect(ledger.plan({ pool: POOL, owner: "dual", choose, count: 2 })).rejects.toThrow(/exhausted/);
    expect((await ledger.holders(POOL)).size).toBe(0);
    expect(await ledger.plan({ pool: POOL, owner: "single", choose: first })).toEqual({
      ips: ["10.5.0.2"],
      seq: 1,
    });
  });

  it("returns the same plan to an owner that plans twice", async () => {
    const ledger = stackLedger({ stack: freshStack(), load: async () => [] });
    const choose = chooser("10.2.0.0/24");
    const a = await ledger.plan({ pool: POOL, owner: "a", choose, count: 2 });
    expect(await ledger.plan({ pool: POOL, owner: "a", choose, count: 2 })).toEqual(a);
    expect(a.ips).toEqual(["10.2.0.2", "10.2.0.3"]);
  });

  it("refuses a requested or reserved address that another owner holds, naming the holder", async () => {
    const ledger = stackLedger({ stack: freshStack(), load: async () => [] });
    const choose = chooser("10.3.0.0/24");
    const a = await ledger.plan({ pool: POOL, owner: "owner-a", choose });
    const req = ledger.plan({ pool: POOL, owner: "owner-b", choose, requested: a.ips });
    await expect(req).rejects.toSatisfy((e) => isIpamError(e, "IP_UNAVAILABLE"));
    await expect(req).rejects.toThrow(/10\.3\.0\.2 .* held by owner-a/);
    await expect(ledger.reserve(POOL, "owner-b", a)).rejects.toThrow(/taken after it was planned/);
    await ledger.reserve(POOL, "owner-a", a);
    await ledger.release(POOL, "owner-a");
    await ledger.reserve(POOL, "owner-b", a);
    expect(await ledger.holders(POOL)).toEqual(new Map([["10.3.0.2", "owner-b"]]));
  });
});

describe("stack ledger: rebuild from the checkpoint", () => {
  const other = "urn:pulumi:s::p::pulumi-nodejs:dynamic/egress-ipam:IpPool::other";
  const checkpoint: CheckpointResource[] = [
    { urn: "urn:stack", type: "pulumi:pulumi:Stack", outputs: {} },
    {
      urn: "live",
      type: "t",
      inputs: holder("live", ["10.9.0.5"], 3),
      outputs: holder("live", ["10.9.0.5"], 3),
    },
    { urn: "old-copy", type: "t", delete: true, outputs: holder("old-copy", ["10.9.0.6"], 4) },
    { urn: "replaced", type: "t", pendingReplacement: true, outputs: holder("replaced", ["10.9.0.7"], 1) },
    { urn: "interrupted-create", type: "t", inputs: holder("interrupted-create", ["10.9.0.8"], 2) },
    { urn: "elsewhere", type: "t", outputs: holder("elsewhere", ["10.9.0.9"], 9, other) },
    { urn: "unrelated", type: "t", outputs: { ip: "10.9.0.10" } },
  ];

  it("takes every record of the pool, including pending deletes, replacements and interrupted creates", async () => {
    const ledger = stackLedger({ stack: freshStack(), load: async () => checkpoint });
    expect(await ledger.holders(POOL)).toEqual(
      new Map([
        ["10.9.0.5", "live"],
        ["10.9.0.6", "old-copy"],
        ["10.9.0.7", "replaced"],
        ["10.9.0.8", "interrupted-create"],
      ]),
    );
    expect(await ledger.holders(other)).toEqual(new Map([["10.9.0.9", "elsewhere"]]));
  });

  it("gives an interrupted create its planned address back, and the next holder a new one", async () => {
    const ledger = stackLedger({ stack: freshStack(), load: async () => checkpoint });
    const choose = chooser("10.9.0.0/24");
    expect(await ledger.plan({ pool: POOL, owner: "interrupted-create", choose })).toEqual({
      ips: ["10.9.0.8"],
      seq: 2,
    });
    expect((await ledger.plan({ pool: POOL, owner: "next", choose })).ips).toEqual(["10.9.0.9"]);
    // Asking for another address than the one it holds is a new plan.
    expect((await ledger.plan({ pool: POOL, owner: "live", requested: ["10.9.0.20"], choose })).ips).toEqual([
      "10.9.0.20",
    ]);
  });

  it("continues round-robin after the record with the highest seq", async () => {
    const ledger = stackLedger({ stack: freshStack(), load: async () => checkpoint });
    const plan = await ledger.plan({ pool: POOL, owner: "new", choose: chooser("10.9.0.0/24") });
    // the newest record is 10.9.0.6 (seq 4); .7 and .8 are taken here; .9 belongs to another pool
    expect(plan).toEqual({ ips: ["10.9.0.9"], seq: 5 });
  });

  it("plans the same addresses in two processes that load the same checkpoint", async () => {
    const plans = async () => {
      const ledger = stackLedger({ stack: freshStack(), load: async () => checkpoint });
      const choose = chooser("10.9.0.0/24", "lowest-free");
      const out: string[] = [];
      for (const owner of ["a", "b", "c"])
        out.push(...(await ledger.plan({ pool: POOL, owner, choose })).ips);
      return out;
    };
    const first = await plans();
    expect(first).toEqual(["10.9.0.2", "10.9.0.3", "10.9.0.4"]);
    expect(await plans()).toEqual(first);
  });

  it("reads the checkpoint once per stack and process, and retries after a failed read", async () => {
    let calls = 0;
    const stack = freshStack();
    const load = async () => {
      calls++;
      if (calls === 1) throw new Error("backend unreachable");
      return checkpoint;
    };
    const ledger = stackLedger({ stack, load });
    await expect(ledger.holders(POOL)).rejects.toThrow("backend unreachable");
    await ledger.holders(POOL);
    await ledger.holders(other);
    await stackLedger({ stack, load }).holders(POOL);
    expect(calls).toBe(2);
  });

  it("frees an address whose holder is deleted, but not one another owner holds", async () => {
    const ledger = stackLedger({ stack: freshStack(), load: async () => checkpoint });
    await ledger.release(POOL, "old-copy", ["10.9.0.6", "10.9.0.5"]);
    const holders = await ledger.holders(POOL);
    expect(holders.has("10.9.0.6")).toBe(false);
    expect(holders.get("10.9.0.5")).toBe("live");
  });
});

describe("stack ledger: planning ahead in program order", () => {
  const choose = chooser("10.4.0.0/24");
  const kept = [{ urn: "kept", type: "t", inputs: {}, outputs: holder("kept", ["10.4.0.9"], 7) }];

  it("plans earlier holders first, skipping holders that keep their record or already planned", async () => {
    const ledger = stackLedger({ stack: freshStack(), load: async () => kept as CheckpointResource[] });
    await ledger.plan({ pool: POOL, owner: "b", choose });
    await ledger.planAhead([
      { pool: POOL, owner: "a", choose },
      { pool: POOL, owner: "kept", choose },
      { pool: POOL, owner: "b", choose },
      { pool: POOL, owner: "c", requested: ["10.4.0.50"], choose },
      { pool: POOL, owner: "d", choose },
    ]);
    const byOwner = (m: ReadonlyMap<string, string>) => Object.fromEntries([...m].map(([ip, o]) => [o, ip]));
    // b planned first (after the cursor .9); the requested .50 does not move the cursor.
    expect(byOwner(await ledger.holders(POOL))).toEqual({
      kept: "10.4.0.9",
      b: "10.4.0.10",
      a: "10.4.0.11",
      c: "10.4.0.50",
      d: "10.4.0.12",
    });
    expect(await ledger.plan({ pool: POOL, owner: "a", choose })).toEqual({ ips: ["10.4.0.11"], seq: 9 });
    expect(await ledger.plan({ pool: POOL, owner: "c", requested: ["10.4.0.50"], choose })).toEqual({
      ips: ["10.4.0.50"],
      seq: 0,
    });
  });

  it("skips what cannot be planned and plans the holders after it", async () => {
    const ledger = stackLedger({ stack: freshStack(), load: async () => kept as CheckpointResource[] });
    const tiny = chooser("10.4.0.8/30"); // one address besides the gateway: .10 (.9 is kept's)
    await ledger.planAhead([
      { pool: POOL, owner: "wants-kept", requested: ["10.4.0.9"], choose },
      { pool: POOL, owner: "first", choose: tiny },
      { pool: POOL, owner: "exhausted", choose: tiny },
      { pool: POOL, owner: "requested", requested: ["10.4.0.20"], choose },
    ]);
    expect([...(await ledger.holders(POOL))].sort()).toEqual([
      ["10.4.0.10", "first"],
      ["10.4.0.20", "requested"],
      ["10.4.0.9", "kept"],
    ]);
    await expect(
      ledger.plan({ pool: POOL, owner: "wants-kept", requested: ["10.4.0.9"], choose }),
    ).rejects.toThrow(/10\.4\.0\.9 .* is held by kept/);
  });
});

describe("stack ledger: the holder is the resource that carries the record", () => {
  // `web` renamed `web2` with an alias: web2's state still records the owner `web`.
  const load = async (): Promise<CheckpointResource[]> => [
    { urn: "web2", type: "t", outputs: holder("web", ["10.6.0.2"], 1) },
  ];
  const choose = chooser("10.6.0.0/24");

  it.each<[string, boolean, string[] | Error]>([
    ["a new `web` planned automatically gets another address", false, ["10.6.0.3"]],
    ["a new `web` requesting the address is refused naming web2", false, new Error("held by web2")],
    ["with adopt: true it takes it over", true, ["10.6.0.2"]],
  ])("%s", async (name, adopt, expected) => {
    const ledger = stackLedger({ stack: freshStack(), load });
    const requested = name.includes("request") || adopt ? ["10.6.0.2"] : undefined;
    const plan = ledger.plan({ pool: POOL, owner: "web", choose, requested, adopt });
    if (expected instanceof Error) await expect(plan).rejects.toThrow(expected.message);
    else expect((await plan).ips).toEqual(expected);
  });
});

describe("stack ledger: blocks", () => {
  const blocks =
    (length: number): Chooser =>
    (taken) => {
      // The lowest free aligned block of 10.9.0.0/24, by a plain scan (the allocator's own search
      // is tested on its own).
      const size = 2 ** (32 - length);
      for (let at = 0; at < 256; at += size) {
        const cidr = `10.9.0.${at}/${length}`;
        const span = taken
          .intervalsOf(4)
          .countIn(0x0a090000n + BigInt(at), 0x0a090000n + BigInt(at + size - 1));
        if (span === 0n) return cidr;
      }
      throw new Error("full");
    };

  it("keeps the new block of a replacement taken when the old block around it is released", async () => {
    const ledger = stackLedger({ stack: freshStack(), load: async () => [] });
    await ledger.reserve(POOL, "b", { ips: ["10.9.0.0/24"], seq: 1 });
    // The replacement asks for a block inside its old one: the same holder, so no refusal.
    await ledger.reserve(POOL, "b", { ips: ["10.9.0.0/25"], seq: 2 });
    await ledger.release(POOL, "b", ["10.9.0.0/24"]);
    expect([...(await ledger.holders(POOL))]).toEqual([["10.9.0.0/25", "b"]]);
    const next = await ledger.plan({ pool: POOL, owner: "c", choose: blocks(25), prefixLength: 25 });
    expect(next.ips).toEqual(["10.9.0.128/25"]);
  });

  it("refuses a block over another holder's address or block, naming it", async () => {
    const ledger = stackLedger({ stack: freshStack(), load: async () => [] });
    await ledger.reserve(POOL, "a", { ips: ["10.9.0.77"], seq: 1 });
    const err = await ledger
      .plan({ pool: POOL, owner: "b", requested: ["10.9.0.64/26"], choose: blocks(26) })
      .catch((e: Error) => e);
    expect(String(err)).toContain("requested block 10.9.0.64/26 in pool");
    expect(String(err)).toContain("overlaps what is held by a");
  });
});
