// The marker protocol against an in-memory API server (fake-configmaps.ts) whose every request
// waits a random moment before and after it takes effect: overlapping entries written at once, in
// many interleavings, are never both held; releases leave no marker; lapsed holds, interrupted
// releases and a rule added to a pool with claims keep blocks apart too.
import { describe, expect, it } from "vitest";
import { entriesOverlap, entrySpan } from "../../../provider/ledger/held-entry";
import {
  ClaimStore,
  isLive,
  type Claim,
  type ClaimFields,
} from "../../../provider/ledger/kubernetes/claim-store";
import { entryWrites } from "../../../provider/ledger/kubernetes/entry-writes";
import { MarkerConflict } from "../../../provider/ledger/kubernetes/block-markers";
import { PoolDefinitions } from "../../../provider/ledger/kubernetes/pool-definition";
import { FakeConfigMaps } from "./fake-configmaps";
import { claimName } from "../../../provider/ledger/kubernetes/claim-names";

let pools = 0;
const rule = { min: 24, max: 27 };
const definitionOf = (prefixLengths?: object) =>
  JSON.stringify({ ranges: [{ subnet: "10.0.0.0/16" }], ...(prefixLengths ? { prefixLengths } : {}) });

/** A pool on a fresh fake API server, with its definition stored (and its markers ready) when given a rule. */
async function pool(prefixLengths?: object, jitterMs = 2) {
  const fake = new FakeConfigMaps(jitterMs);
  const clients = fake.clients();
  const name = `p${++pools}-${Math.random().toString(36).slice(2, 8)}`; // process-wide caches are per pool
  const store = new ClaimStore(clients, "ipam", name);
  const defs = new PoolDefinitions(
    { name, namespace: "ipam", lockDuration: 1, lockAcquireTimeout: 1 },
    clients,
  );
  // The owner's agree (the pool's one stack): an update of the definition is another agree.
  const agree = (p?: object) =>
    defs.agree({ definition: definitionOf(p), stack: "o/p/net", owner: "urn:pool" });
  if (prefixLengths) await agree(prefixLengths);
  const writes = entryWrites(store, `pool "${name}"`, () => undefined);
  // Another process's writes (its own batches: a process batches the writes of one marker).
  const elsewhere = new ClaimStore({ ...clients, server: "https://fake-2" }, "ipam", name);
  const other = entryWrites(elsewhere, `pool "${name}"`, () => undefined);
  /** The object name of an entry (or a marker) of this pool. */
  const at = (entry: string) => claimName(name, entry);
  return { fake, store, writes, other, agree, defs, at };
}

const claim = (who: string): ClaimFields => ({
  state: "claim",
  stack: `o/p/${who}`,
  stackId: `id-${who}`,
  owner: `urn:${who}`,
  seq: 0,
  expires: 0,
});
const hold = (who: string, expires = Date.now() + 60_000): ClaimFields => ({
  ...claim(who),
  state: "hold",
  expires,
});

type Writes = Awaited<ReturnType<typeof pool>>["writes"];
/** A create that found the entry's claim there already (the ledger reads it and plans again). */
const lost = () => Object.assign(new Error("lost the create"), { code: 409 });

/** Waits up to `ms`, so that operations started together start in every order and overlap differently. */
const stagger = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * ms));

/** Claims `entry` for `who` as `reserve` does without a plan, or as plan then reserve (a hold first). */
async function claimEntry(
  writes: Writes,
  entry: string,
  who: string,
  viaHold: boolean,
  start = 0,
): Promise<Claim> {
  if (start > 0) await stagger(start);
  if (!viaHold) {
    const c = await writes.write(entry, undefined, claim(who), hold(who));
    if (!c) throw lost();
    return c;
  }
  const h = await writes.write(entry, undefined, hold(who));
  if (!h) throw lost();
  return (await writes.write(entry, h, claim(who)))!;
}

/** Live claims and holds of the pool that overlap one another. */
const overlaps = (claims: Claim[]) =>
  claims.flatMap((a, i) =>
    claims
      .slice(i + 1)
      .flatMap((b) => (entriesOverlap(entrySpan(a.ip), entrySpan(b.ip)) ? [[a.ip, b.ip]] : [])),
  );

describe("entries written at once", () => {
  it.each([
    [["10.0.0.0/24", "10.0.0.0/25"], 1],
    [["10.0.0.0/24", "10.0.0.77"], 1],
    [["10.0.0.64/26", "10.0.0.96/27"], 1],
    [["10.0.0.0/25", "10.0.0.0/25"], 1], // one block, two stacks
    [["10.0.0.0/24", "10.0.0.0/25", "10.0.0.128/26", "10.0.0.100", "10.0.0.101"], 1],
    [["10.0.0.0/25", "10.0.0.128/25", "10.0.1.5"], 3], // disjoint: all of them
  ])(
    "%j: never two overlapping, at least %d held, over 24 interleavings",
    async (entries, least) => {
      const { fake, store, writes } = await pool(rule);
      for (let round = 0; round < 24; round++) {
        // Every other round starts from the registrations of interrupted releases (claims deleted
        // without their markers): a marker listing an entry that is gone, and soon held again.
        const ghosts = round % 2 === 1;
        if (ghosts) {
          const inner = (e: string) => (e.includes("/") ? Number(e.split("/")[1]) : 33);
          for (const e of [...entries].sort((a, b) => inner(b) - inner(a))) {
            const c = await claimEntry(writes, e, "ghost", false).catch(() => undefined);
            if (c) await store.delete(c);
          }
        }
        const results = await Promise.allSettled(
          entries.map((e, i) => claimEntry(writes, e, `s${i}`, Math.random() < 0.5, 12)),
        );
        const won = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
        for (const r of results) {
          if (r.status === "rejected" && !(r.reason instanceof MarkerConflict) && r.reason?.code !== 409)
            throw r.reason;
        }
        expect(overlaps(won)).toEqual([]);
        expect(won.length).toBeGreaterThanOrEqual(least);
        const live = (await store.list()).filter((c) => isLive(c, Date.now()));
        expect(overlaps(live)).toEqual([]);
        expect(
          live
            .filter((c) => c.state === "claim")
            .map((c) => c.ip)
            .sort(),
        ).toEqual(won.map((c) => c.ip).sort());
        for (const c of await store.list()) await writes.remove(c);
        if (ghosts) await writes.markers.sweep(); // what interrupted releases left
        expect(fake.named("marker")).toEqual([]); // releases leave no marker behind
      }
    },
    60_000,
  );

  it("a /24 filled by /26s and /27s claimed at once by two stacks, many times", async () => {
    const { fake, store, writes } = await pool(rule);
    const quarters = ["10.0.0.0/26", "10.0.0.64/26", "10.0.0.128/26", "10.0.0.192/26"];
    const eighths = Array.from({ length: 8 }, (_, i) => `10.0.0.${i * 32}/27`);
    for (let round = 0; round < 10; round++) {
      const mine = [...quarters, ...eighths].sort(() => Math.random() - 0.5);
      const all = await Promise.allSettled([
        ...mine.map((e) => claimEntry(writes, e, "a", true, 12)),
        ...mine.map((e) => claimEntry(writes, e, "b", false, 12)),
      ]);
      const won = all.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
      expect(overlaps(won)).toEqual([]);
      for (const c of await store.list()) await writes.remove(c);
      expect(fake.named("marker")).toEqual([]);
    }
  }, 60_000);
});

describe("lapsed holds, interrupted releases, garbage", () => {
  it("an entry inside a lapsed hold of a block turns it into a marker; the block's owner cannot claim it", async () => {
    const { store, writes } = await pool(rule);
    const lapsed = (await writes.write("10.0.0.0/24", undefined, hold("a", Date.now() - 1)))!;
    const inside = await claimEntry(writes, "10.0.0.0/26", "b", false);
    expect(inside.state).toBe("claim");
    expect(await store.read("10.0.0.0/24")).toBeUndefined(); // a marker now, no claim
    await expect(writes.write("10.0.0.0/24", lapsed, claim("a"))).rejects.toMatchObject({ code: 409 });
    const again = writes.write("10.0.0.0/24", undefined, claim("a"), hold("a"));
    await expect(again).rejects.toBeInstanceOf(MarkerConflict);
    await expect(again).rejects.toMatchObject({ holder: { ip: "10.0.0.0/26", owner: "urn:b" } });
  });

  it("a block deletes the lapsed holds inside it, whose owners then cannot renew them", async () => {
    const { store, writes } = await pool(rule);
    const lapsed = (await writes.write("10.0.0.5", undefined, hold("a", Date.now() - 1)))!;
    const block = await claimEntry(writes, "10.0.0.0/24", "b", false);
    expect(block.state).toBe("claim");
    expect(await store.read("10.0.0.5")).toBeUndefined();
    // Its renewal registers first, and finds the block.
    await expect(writes.write("10.0.0.5", lapsed, hold("a"))).rejects.toMatchObject({
      holder: { ip: "10.0.0.0/24", owner: "urn:b" },
    });
  });

  it("a live hold inside a block keeps the block out, naming it", async () => {
    const { writes } = await pool(rule);
    await writes.write("10.0.0.5", undefined, hold("a"));
    const block = writes.write("10.0.0.0/25", undefined, claim("b"), hold("b"));
    await expect(block).rejects.toMatchObject({ holder: { ip: "10.0.0.5", owner: "urn:a", state: "hold" } });
  });

  it("a hold that never registered (its process died) cannot become a claim inside a block", async () => {
    const { store, writes } = await pool(rule);
    const orphan = (await store.create("10.0.0.5", hold("a")))!; // written, never registered
    await claimEntry(writes, "10.0.0.0/24", "b", false); // the marker protocol cannot see it
    await expect(writes.write("10.0.0.5", orphan, claim("a"))).rejects.toMatchObject({
      holder: { ip: "10.0.0.0/24", owner: "urn:b" },
    });
    expect((await store.read("10.0.0.5"))?.state).toBe("hold"); // it lapses; it never became a claim
  });

  it("a marker whose entries are gone (a release interrupted) is converted by a block, or swept", async () => {
    const { fake, store, writes } = await pool(rule);
    const quarter = await claimEntry(writes, "10.0.0.64/26", "a", false);
    await store.delete(quarter); // the claim went, its registrations did not
    expect(fake.named("marker")).toHaveLength(2); // the /24 and the /25 around it
    const half = await claimEntry(writes, "10.0.0.0/25", "b", true); // converts the /25's marker
    expect(half.state).toBe("claim");
    await store.delete(half);
    expect(await writes.markers.sweep()).toBe(1); // the /24's marker, whose entries are all gone
    expect(fake.named("marker")).toEqual([]);
    expect(fake.named("claim")).toEqual([]);
  });

  it("sweeping keeps a marker with a live entry, dropping only the gone ones", async () => {
    const { fake, store, writes } = await pool(rule);
    const a = await claimEntry(writes, "10.0.0.5", "a", false);
    await claimEntry(writes, "10.0.0.6", "b", false);
    await store.delete(a);
    expect(await writes.markers.sweep()).toBe(0);
    const markers = await writes.markers.store.list();
    expect(markers.map((m) => Object.keys(m.children))).toEqual(markers.map(() => ["10.0.0.6"]));
    expect(fake.named("marker")).toHaveLength(4);
  });
});

describe("the pool's update", () => {
  it("widening the rule registers the entries at the new lengths, then allows blocks there; it sweeps garbage", async () => {
    const { fake, store, writes, agree, defs } = await pool(rule);
    await claimEntry(writes, "10.0.0.77", "a", true);
    await store.delete(await claimEntry(writes, "10.0.1.64/26", "gone", false)); // an interrupted release
    const early = writes.write("10.0.0.64/28", undefined, claim("b"), hold("b"));
    await expect(early).rejects.toMatchObject({ code: "PREFIX_NOT_ALLOWED" }); // /28 not in the rule yet
    await agree({ min: 22, max: 28 });
    expect([(await defs.read())?.markers, (await defs.read())?.markersReady]).toEqual([
      { min: 22, max: 28 },
      { min: 22, max: 28 },
    ]);
    expect(fake.named("marker").filter((n) => n.includes("10.0.1."))).toEqual([]); // swept
    await expect(writes.write("10.0.0.64/28", undefined, claim("b"), hold("b"))).rejects.toMatchObject({
      holder: { ip: "10.0.0.77" }, // registered at /28 by the update, though it was claimed before
    });
    await expect(claimEntry(writes, "10.0.0.0/22", "c", false)).rejects.toMatchObject({
      holder: { ip: "10.0.0.77" },
    });
    expect((await claimEntry(writes, "10.0.0.80/28", "d", false)).state).toBe("claim");
  });

  it("narrowing the rule keeps registering where blocks were allowed; a block held then stays held", async () => {
    const { writes, agree, defs } = await pool(rule);
    const wide = await claimEntry(writes, "10.0.0.0/24", "a", false);
    const planned = (await writes.write("10.0.1.0/25", undefined, hold("c")))!;
    await agree({ min: 26, max: 27 });
    expect((await defs.read())?.markers).toEqual(rule);
    await expect(claimEntry(writes, "10.0.0.5", "b", false)).rejects.toMatchObject({
      holder: { ip: wide.ip },
    });
    // The /25 planned before: renewed and claimed, though a new /25 is refused now.
    const renewed = (await writes.write("10.0.1.0/25", planned, hold("c")))!;
    expect((await writes.write("10.0.1.0/25", renewed, claim("c")))!.state).toBe("claim");
    await expect(claimEntry(writes, "10.0.2.0/25", "d", false)).rejects.toMatchObject({
      code: "PREFIX_NOT_ALLOWED",
    });
    await expect(claimEntry(writes, "10.0.1.64/26", "d", false)).rejects.toMatchObject({
      holder: { ip: "10.0.1.0/25" },
    });
  });
});

describe("pools without markers", () => {
  it("write claims as before (one create each, plus one read of the definition) and no marker", async () => {
    const { fake, writes } = await pool(undefined, 0);
    await writes.write("10.0.0.5", undefined, hold("a"));
    expect(fake.calls).toEqual({ create: 1, get: 1 });
    expect(fake.named("marker")).toEqual([]);
  });

  it.each([
    [undefined, /need the pool's rule with both ends/],
    [{ min: 24 }, /need the pool's rule with both ends/],
    [{ min: 24, max: 26 }, /outside the pool's rule prefixLengths \/24 to \/26/],
  ])("refuse blocks under the rule %j before writing anything", async (prefixLengths, why) => {
    const { fake, writes } = await pool(prefixLengths, 0);
    const writesBefore = (fake.calls.create ?? 0) + (fake.calls.update ?? 0);
    const block = writes.write("10.0.0.0/27", undefined, claim("a"), hold("a"));
    await expect(block).rejects.toMatchObject({
      code: "PREFIX_NOT_ALLOWED",
      message: expect.stringMatching(why),
    });
    expect((fake.calls.create ?? 0) + (fake.calls.update ?? 0)).toBe(writesBefore);
  });
});

describe("writes per claim", () => {
  it.each([
    // entry, via hold, writes (create + update + delete) at the plan, at the claim
    ["10.0.0.64/26", true, 3, 1], // hold + markers /24 and /25; then the claim over the hold
    ["10.0.0.64/26", false, 0, 4], // hold, two markers, the claim
    ["10.0.0.77", true, 5, 1], // hold + markers /24 to /27
    ["10.0.0.0/24", true, 1, 1], // the widest block registers nowhere
  ])("%s (via a hold: %s): %d writes at plan, %d at claim", async (entry, viaHold, atPlan, atClaim) => {
    const { fake, writes } = await pool(rule, 0);
    const count = () => (fake.calls.create ?? 0) + (fake.calls.update ?? 0) + (fake.calls.delete ?? 0);
    const before = count();
    const h = viaHold ? await writes.write(entry, undefined, hold("a")) : undefined;
    const planned = count();
    await writes.write(entry, h, claim("a"), hold("a"));
    expect([planned - before, count() - planned]).toEqual([atPlan, atClaim]);
  });
});

describe("a rule set on a pool with claims", () => {
  it("registers them before blocks are allowed, also for claims written while it is set", async () => {
    for (let round = 0; round < 12; round++) {
      const { store, writes, agree } = await pool(undefined);
      await agree(); // the definition without a rule
      const early = [3, 40, 99].map((i) => claimEntry(writes, `10.0.0.${i}`, `e${i}`, Math.random() < 0.5));
      await Promise.all(early);
      // Addresses claimed while the rule is being set, and blocks asked for as soon as it is.
      const during = [130, 170, 250].map((i) =>
        claimEntry(writes, `10.0.0.${i}`, `d${i}`, Math.random() < 0.5),
      );
      const setting = agree(rule); // an update of the pool: the stored definition had no rule
      const blocks = Array.from({ length: 8 }, (_, i) =>
        setting.then(() => claimEntry(writes, `10.0.0.${i * 32}/27`, `b${i}`, Math.random() < 0.5)),
      );
      const settled = await Promise.allSettled([...during, ...blocks]);
      for (const r of settled)
        if (r.status === "rejected" && !(r.reason instanceof MarkerConflict)) throw r.reason;
      const live = (await store.list()).filter((c) => c.state === "claim");
      expect(overlaps(live)).toEqual([]);
      expect(live.filter((c) => !c.ip.includes("/"))).toHaveLength(6); // every address kept its claim
      // The /27s without an address, and only those.
      expect(
        live
          .filter((c) => c.ip.includes("/"))
          .map((c) => c.ip)
          .sort(),
      ).toEqual(["10.0.0.192/27", "10.0.0.64/27"]);
    }
  }, 60_000);
});

// Each race of the argument in docs/shared-pools.md ("Blocks"), both ways round: a gate holds one
// request of one operation until the other operation has run, then lets it go on.
describe("the races, each interleaving", () => {
  /** A pool whose /24 marker lists a /25 that is gone (a release interrupted after its delete). */
  async function staleRegistration() {
    const p = await pool(rule, 0);
    await p.store.delete(await claimEntry(p.writes, "10.0.0.0/25", "ghost", false));
    return p;
  }

  it("a block converting a marker loses to a registration made after it read the entries", async () => {
    const { fake, writes, at } = await staleRegistration();
    const conversion = fake.gate("update", at("10.0.0.0/24"));
    const x = claimEntry(writes, "10.0.0.0/24", "x", false);
    await conversion.reached; // x found the /25 gone, and writes its claim over the marker now
    const y = await claimEntry(writes, "10.0.0.0/25", "y", false); // registers: the marker changes
    conversion.open();
    await expect(x).rejects.toMatchObject({ code: 409 }); // its resourceVersion is stale
    await expect(claimEntry(writes, "10.0.0.0/24", "x", false)).rejects.toMatchObject({
      holder: { ip: y.ip },
    });
  });

  it("a registration waiting on a marker: the block reads the entry's object and refuses", async () => {
    const { fake, writes, at } = await staleRegistration();
    const registration = fake.gate("update", at("10.0.0.0/24"));
    const y = claimEntry(writes, "10.0.0.0/25", "y", false);
    await registration.reached; // y's object exists; its registration is not written yet
    await expect(claimEntry(writes, "10.0.0.0/24", "x", false)).rejects.toMatchObject({
      holder: { ip: "10.0.0.0/25", owner: "urn:y" },
    });
    registration.open();
    expect((await y).state).toBe("claim");
  });

  it("an entry created after the block read it gone finds the block when it registers", async () => {
    const { fake, store, writes, at } = await staleRegistration();
    const create = fake.gate("create", at("10.0.0.0/25"));
    const y = claimEntry(writes, "10.0.0.0/25", "y", false);
    await create.reached;
    expect((await claimEntry(writes, "10.0.0.0/24", "x", false)).state).toBe("claim");
    create.open();
    await expect(y).rejects.toMatchObject({ holder: { ip: "10.0.0.0/24" } });
    expect(await store.read("10.0.0.0/25")).toBeUndefined(); // y took its object back
  });

  it.each([
    ["the entry's marker", "10.0.0.0/25", "10.0.0.0/24", "urn:x"], // the /25 registers into x's /24
    ["the block's own object", "10.0.0.0/24", "10.0.0.0/25", "urn:y"], // x finds y's marker
  ])(
    "without a marker yet, a block and an entry inside it: %s written second loses",
    async (_, gated, winner, owner) => {
      const { fake, store, writes, at } = await pool(rule, 0);
      const gate = fake.gate("create", at("10.0.0.0/24"));
      const first = gated === "10.0.0.0/24" ? "x" : "y";
      const late =
        first === "x"
          ? claimEntry(writes, "10.0.0.0/24", "x", false)
          : claimEntry(writes, "10.0.0.0/25", "y", false);
      await gate.reached;
      const early =
        first === "x"
          ? claimEntry(writes, "10.0.0.0/25", "y", false)
          : claimEntry(writes, "10.0.0.0/24", "x", false);
      expect((await early).ip).toBe(winner);
      gate.open();
      await expect(late).rejects.toMatchObject({ holder: { ip: winner, owner } });
      expect((await store.list()).map((c) => c.ip)).toEqual([winner]);
    },
  );

  it("a release deleting an emptied marker loses to a registration of another process, which keeps the marker", async () => {
    const { fake, store, writes, other, at } = await pool(rule, 0);
    const a = await claimEntry(writes, "10.0.0.64/26", "a", false);
    const emptied = fake.gate("delete", at("10.0.0.0/24"));
    const release = writes.remove(a);
    await emptied.reached;
    await claimEntry(other, "10.0.0.96/27", "b", false); // registers in the /24 and /25 markers
    emptied.open();
    await release;
    const markers = await writes.markers.store.list();
    expect(markers.map((m) => [m.block, Object.keys(m.children)]).sort()).toEqual([
      ["10.0.0.0/24", ["10.0.0.96/27"]],
      ["10.0.0.0/25", ["10.0.0.96/27"]],
      ["10.0.0.64/26", ["10.0.0.96/27"]],
    ]);
    await expect(claimEntry(writes, "10.0.0.0/24", "x", false)).rejects.toMatchObject({
      holder: { owner: "urn:b" },
    });
    expect((await store.list()).map((c) => c.ip)).toEqual(["10.0.0.96/27"]);
  });

  it("a lapsed hold renewed while a block deletes it: the delete fails and the block refuses", async () => {
    const { fake, writes, at } = await pool(rule, 0);
    const lapsed = (await writes.write("10.0.0.5", undefined, hold("a", Date.now() - 1)))!;
    const deletion = fake.gate("delete", at("10.0.0.5"));
    const x = claimEntry(writes, "10.0.0.0/24", "x", false);
    await deletion.reached;
    const renewed = (await writes.write("10.0.0.5", lapsed, hold("a")))!; // still registered: no marker write
    deletion.open();
    await expect(x).rejects.toMatchObject({ code: 409 });
    await expect(claimEntry(writes, "10.0.0.0/24", "x", false)).rejects.toMatchObject({
      holder: { ip: "10.0.0.5", resourceVersion: renewed.resourceVersion },
    });
  });

  it("a block claimed again over its own old object still writes every marker (an update that changes nothing would not count)", async () => {
    const { fake, store, writes, at } = await pool(rule, 0);
    // A lapsed hold of a /25, registered in the /24's marker; a /26 inside turns it into a marker
    // (the same object, the same uid), and is deleted without its release.
    await writes.write("10.0.0.0/25", undefined, hold("e1", Date.now() - 1));
    await store.delete(await claimEntry(writes, "10.0.0.0/26", "i", false));
    const conversion = fake.gate("update", at("10.0.0.0/24"));
    const x = claimEntry(writes, "10.0.0.0/24", "x", false);
    await conversion.reached; // x found the /25 (a marker) and the /26 (gone) not held
    // The /25 again, over its old object: its registration in the /24's marker must change it.
    const e2 = await claimEntry(writes, "10.0.0.0/25", "e2", false);
    conversion.open();
    await expect(x).rejects.toMatchObject({ code: 409 });
    expect((await store.read("10.0.0.0/25"))?.uid).toBe(e2.uid);
  });
});

// Two writers of one existing object (the same uid and resourceVersion, as two stacks taking over
// one lapsed hold read it): the second to register finds the first's token of that uid and counts
// on it, so the first must not take it back when its own write fails.
describe("two writers of one existing object, the race injected", () => {
  /** A pool with an unregistered lapsed hold of 10.0.0.5 (its process died before registering). */
  async function orphaned() {
    const p = await pool(rule, 0);
    const orphan = (await p.store.create("10.0.0.5", hold("o", Date.now() - 1)))!;
    // The second stack: a process of its own over the same API server.
    const other = entryWrites(p.store, "the pool", () => undefined);
    return { ...p, orphan, other };
  }

  it("injected race: the loser's write fails after the winner counted on its registration, and the winner stays registered", async () => {
    const { fake, writes, other, orphan, at } = await orphaned();
    const write = fake.gate("update", at("10.0.0.5"));
    const a = writes.write("10.0.0.5", orphan, hold("a"));
    await write.reached; // a registered (the markers had no token of the uid), its write waits
    const b = (await other.write("10.0.0.5", orphan, hold("b")))!; // finds a's tokens: writes none
    write.open();
    await expect(a).rejects.toMatchObject({ code: 409 });
    await expect(claimEntry(writes, "10.0.0.0/24", "x", false)).rejects.toMatchObject({
      holder: { ip: "10.0.0.5", owner: "urn:b", resourceVersion: b.resourceVersion },
    });
  });

  it("injected race: a takeover refused by a block around it leaves its registrations to another that counted on them", async () => {
    const { fake, writes, other, orphan, at } = await orphaned();
    const h = await claimEntry(writes, "10.0.0.0/26", "h", false); // refuses a's registration
    const takeBack = fake.gate("delete", at("10.0.0.0/27")); // the /27 marker a created
    const a = writes.write("10.0.0.5", orphan, hold("a"));
    await Promise.race([takeBack.reached, a.catch(() => undefined)]);
    await writes.remove(h); // the /26 is released: b registers where a was refused
    const b = (await other.write("10.0.0.5", orphan, hold("b")))!; // counts on a's /27 token
    takeBack.open();
    await expect(a).rejects.toMatchObject({ holder: { ip: "10.0.0.0/26" } });
    await expect(claimEntry(writes, "10.0.0.0/27", "x", false)).rejects.toMatchObject({
      holder: { ip: "10.0.0.5", owner: "urn:b", resourceVersion: b.resourceVersion },
    });
  });
});
