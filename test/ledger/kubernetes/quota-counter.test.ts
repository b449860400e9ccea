// Quotas of a shared pool against an in-memory API server (fake-configmaps.ts) whose every request
// waits a random moment: a group at its limit refuses the next entry naming the rule, the count and
// who set it; stacks racing from two processes never pass the limit together (and would without
// the counter's resourceVersion); releases free room; what crashes and lapsed holds leave is pruned
// when room is needed; pools without quotas write what they wrote before.
import { describe, expect, it } from "vitest";
import type * as k8s from "@kubernetes/client-node";
import type { KubeClients } from "../../../provider/kube/kube-config";
import {
  ClaimStore,
  isLive,
  type Claim,
  type ClaimFields,
} from "../../../provider/ledger/kubernetes/claim-store";
import { entryWrites } from "../../../provider/ledger/kubernetes/entry-writes";
import { PoolDefinitions } from "../../../provider/ledger/kubernetes/pool-definition";
import { counterName, lapsedGraceMs } from "../../../provider/ledger/kubernetes/quota-counter";
import { markerRuleOf } from "../../../provider/ledger/kubernetes/marker-range";
import { canonicalQuotas, quotaGroupOf, type PoolQuotas } from "../../../provider/ledger/quota-rules";
import { FakeConfigMaps } from "./fake-configmaps";

let pools = 0;
const setBy = { stack: "o/net/prod", owner: "urn:pool" };

/** A pool on a fresh fake API server: its definition (with a block rule, when given) and quotas. */
async function pool(quotas?: PoolQuotas, prefixLengths?: object) {
  const fake = new FakeConfigMaps(2);
  const name = `q${++pools}-${Math.random().toString(36).slice(2, 8)}`; // process-wide caches are per pool
  const what = `pool "${name}"`;
  /** A process of its own (its caches, its counter queue): the same API server under another name. */
  const process = (server = "https://fake") => {
    const clients = { ...fake.clients(), server } as KubeClients;
    const store = new ClaimStore(clients, "ipam", name);
    return { store, writes: entryWrites(store, what, () => undefined) };
  };
  const { store, writes } = process();
  if (prefixLengths) {
    const defs = new PoolDefinitions(
      { name, namespace: "ipam", lockDuration: 1, lockAcquireTimeout: 1 },
      store.clients,
    );
    const definition = JSON.stringify({ ranges: [{ subnet: "10.0.0.0/16" }], prefixLengths });
    await defs.agree({ definition, ...setBy });
  }
  /** Stores `q` in the definition object (as the version `version`, when given), as the pool's owner does. */
  const setQuotas = async (q: PoolQuotas | string, version?: string) => {
    const core = store.clients.core;
    const cm = await core
      .readNamespacedConfigMap({ name: `${name}.pool`, namespace: "ipam" })
      .catch(() => undefined);
    const { quotas: _old, quotasVersion: _version, ...rest } = cm?.data ?? {};
    const text = typeof q === "string" ? q : canonicalQuotas(q);
    const data = {
      format: "1",
      definition: "{}",
      ...rest,
      ...setBy,
      ...(text ? { quotas: text } : {}),
      ...(text && version ? { quotasVersion: version } : {}),
    };
    const body: k8s.V1ConfigMap = {
      metadata: {
        ...cm?.metadata,
        name: `${name}.pool`,
        labels: { "egress-ipam/pool": name, "egress-ipam/role": "pool" },
      },
      data,
    };
    if (cm) await core.replaceNamespacedConfigMap({ name: `${name}.pool`, namespace: "ipam", body });
    else await core.createNamespacedConfigMap({ namespace: "ipam", body });
  };
  if (quotas) await setQuotas(quotas);
  /** What the counter of `who`'s group lists under `q`: claim object names. */
  const listed = (q: PoolQuotas, who: string, id = `id-${who}`) => {
    const group = quotaGroupOf(q, `o/p/${who}`, id)!;
    const cm = fake.objects.get(counterName(name, group));
    return Object.keys(cm?.data ?? {})
      .filter((k) => k.startsWith(`${name}.`))
      .sort();
  };
  const live = async () => (await store.list()).filter((c) => isLive(c, Date.now()));
  return { fake, name, store, writes, process, setQuotas, listed, live };
}

const hold = (who: string, expires = Date.now() + 60_000, id = `id-${who}`): ClaimFields => ({
  state: "hold",
  stack: `o/p/${who}`,
  stackId: id,
  owner: `urn:${who}`,
  seq: 0,
  expires,
});
const claim = (who: string): ClaimFields => ({ ...hold(who), state: "claim", expires: 0 });
const longLapsed = () => Date.now() - lapsedGraceMs - 1_000;

type Writes = Awaited<ReturnType<typeof pool>>["writes"];
const put = async (writes: Writes, entry: string, fields: ClaimFields, existing?: Claim) => {
  const c = await writes.write(entry, existing, fields);
  if (!c) throw new Error(`${entry} exists`);
  return c;
};
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as { code?: string | number; message: string },
  );

describe("the quotas a definition object stores", () => {
  const who = { stack: "o/net/prod", owner: "urn:pool" };
  it.each([
    [
      { ...who, quotas: '{"stacks":{"b/*":2,"a/*":1},"default":4}' },
      { default: 4, stacks: { "b/*": 2, "a/*": 1 } },
      '{"default":4,"stacks":{"a/*":1,"b/*":2}}',
      undefined,
    ],
    [{ ...who, quotas: "{}" }, {}, "{}", undefined],
    [
      { ...who, quotas: '{"default":-1}' },
      {},
      '{"default":-1}',
      /quotas.default: -1 is not a number of addresses/,
    ],
    [{ ...who, quotas: "{default: 2}" }, {}, "{default: 2}", /not JSON/],
    [{ ...who, quotas: '{"default":4}', quotasVersion: "v7" }, { default: 4 }, '{"default":4}', undefined],
  ])("%j: %j", (data, rules, text, problem) => {
    const q = markerRuleOf(data).quotas!;
    expect([q.rules, q.text, q.setBy]).toEqual([rules, text, "stack o/net/prod (urn:pool)"]);
    // What a counter records: the stored version, or the text where an earlier version stored none.
    expect(q.version).toBe("quotasVersion" in data ? data.quotasVersion : text);
    if (problem) expect(q.problem).toMatch(problem);
    else expect(q.problem).toBeUndefined();
  });

  it("none stored: none read", () =>
    expect(markerRuleOf({ ...who, definition: "{}" }).quotas).toBeUndefined());

  it("a value that is no rule refuses new entries naming it; what is held is renewed and claimed", async () => {
    const { writes, setQuotas } = await pool({ default: 2 });
    const held = await put(writes, "10.0.0.1", hold("a"));
    await setQuotas('{"default":"two"}');
    const refused = await refusal(put(writes, "10.0.0.2", hold("a")));
    expect(refused).toMatchObject({ code: "INVALID_CONFIG" });
    expect(refused?.message).toMatch(
      /quotas stored with pool .* are no quota rule \(quotas.default: "two" is not a number/,
    );
    await put(writes, "10.0.0.1", claim("a"), held);
  });
});

describe("a group at its limit", () => {
  it.each([
    [
      { default: 2 },
      "a",
      /^stack o\/p\/a is at the default quota of pool "q\d+-\w+": 2 addresses, set by stack o\/net\/prod \(urn:pool\); it holds 2 addresses and this would add 1 address\. Release/,
    ],
    [
      { stacks: { "p/*": 2 } },
      "b",
      /^stack o\/p\/b is at quota "p\/\*" of pool "q\d+-\w+": 2 addresses \(the stacks it matches count together\), set by stack o\/net\/prod \(urn:pool\); it holds 2 addresses/,
    ],
  ])(
    "%j refuses the next entry of %s naming the rule, the count and who set it; nothing of it stays",
    async (q, who, message) => {
      const { store, writes, listed } = await pool(q);
      await put(writes, "10.0.0.1", hold("a"));
      await put(writes, "10.0.0.2", claim("a"));
      const refused = await refusal(put(writes, "10.0.0.3", hold(who)));
      expect(refused).toMatchObject({ code: "QUOTA_EXCEEDED" });
      expect(refused?.message).toMatch(message);
      expect(await store.read("10.0.0.3")).toBeUndefined();
      expect(listed(q, "a")).toHaveLength(2);
    },
  );

  it("a block counts its size", async () => {
    const q = { default: 8 };
    const { writes, listed, name } = await pool(q, { min: 24, max: 30 });
    await put(writes, "10.0.1.0/30", hold("a"));
    await put(writes, "10.0.1.4/30", claim("a"));
    expect(listed(q, "a")).toEqual([`${name}.10.0.1.0-30`, `${name}.10.0.1.4-30`]);
    const refused = await refusal(put(writes, "10.0.2.1", hold("a")));
    expect(refused?.message).toMatch(/it holds 8 addresses and this would add 1 address\./);
    const { writes: other } = await pool({ default: 3 }, { min: 24, max: 30 });
    expect((await refusal(put(other, "10.0.1.0/30", hold("a"))))?.message).toMatch(
      /holds 0 addresses and this would add 4 addresses/,
    );
  });

  it("a released entry frees its room; renewing and claiming what is listed needs none", async () => {
    const q = { default: 1 };
    const { writes, listed } = await pool(q);
    const first = await put(writes, "10.0.0.1", hold("a"));
    expect((await refusal(put(writes, "10.0.0.2", hold("a"))))?.code).toBe("QUOTA_EXCEEDED");
    const renewed = await put(writes, "10.0.0.1", hold("a"), first);
    const claimed = await put(writes, "10.0.0.1", claim("a"), renewed);
    expect(await writes.remove(claimed)).toBe(true);
    expect(listed(q, "a")).toEqual([]);
    await put(writes, "10.0.0.2", hold("a"));
  });

  it("a quota lowered below usage keeps what is held and refuses what is new", async () => {
    const { writes, setQuotas, live } = await pool({ default: 3 });
    const held = [];
    for (const ip of ["10.0.0.1", "10.0.0.2", "10.0.0.3"]) held.push(await put(writes, ip, hold("a")));
    await setQuotas({ default: 1 });
    await put(writes, "10.0.0.1", claim("a"), held[0]);
    await put(writes, "10.0.0.2", hold("a"), held[1]);
    const refused = await refusal(put(writes, "10.0.0.4", hold("a")));
    expect(refused?.message).toMatch(/quota of .*: 1 address, .* it holds 3 addresses and this would add 1/);
    expect((await live()).map((c) => c.ip).sort()).toEqual(["10.0.0.1", "10.0.0.2", "10.0.0.3"]);
  });

  it("quotas set on a pool that has entries count its live ones (the first registration lists the pool)", async () => {
    const q = { stacks: { "p/*": 3 } };
    const { writes, setQuotas, listed, name } = await pool();
    await put(writes, "10.0.0.1", claim("a"));
    await put(writes, "10.0.0.2", hold("b"));
    await put(writes, "10.0.0.3", hold("c", Date.now() - 1)); // lapsed: not counted
    await setQuotas(q);
    await put(writes, "10.0.0.4", hold("a"));
    expect(listed(q, "a")).toEqual(["1", "2", "4"].map((n) => `${name}.10.0.0.${n}`));
    expect((await refusal(put(writes, "10.0.0.5", hold("c"))))?.message).toMatch(/holds 3 addresses/);
  });

  it("a quota removed, more held, then the same rule restored (another version): the first registration counts what the group holds now", async () => {
    const q = { default: 2 };
    const { writes, setQuotas, listed, name } = await pool();
    await setQuotas(q, "v1");
    await put(writes, "10.0.0.1", hold("a"));
    await setQuotas({});
    for (const ip of ["10.0.0.2", "10.0.0.3", "10.0.0.4"]) await put(writes, ip, hold("a"));
    await setQuotas(q, "v3");
    const refused = await refusal(put(writes, "10.0.0.5", hold("a")));
    expect(refused?.message).toMatch(/2 addresses, .* it holds 4 addresses and this would add 1 address/);
    expect(listed(q, "a")).toEqual(["1", "2", "3", "4"].map((n) => `${name}.10.0.0.${n}`));
  });

  it("the owner's writes give the quotas a new version at every change (a removal and a restore too), and keep it otherwise", async () => {
    const { fake, store, name } = await pool();
    const defs = new PoolDefinitions(
      { name, namespace: "ipam", lockDuration: 1, lockAcquireTimeout: 1 },
      store.clients,
    );
    const version = () => fake.objects.get(`${name}.pool`)?.data?.quotasVersion;
    const agree = (quotas: string | undefined, subnet = "10.0.0.0/16") =>
      defs.agree({
        definition: JSON.stringify({ ranges: [{ subnet }] }),
        ...setBy,
        ...(quotas ? { quotas } : {}),
      });
    await agree('{"default":2}');
    const first = version();
    expect(first).toMatch(/\S/);
    await agree('{"default":2}', "10.0.0.0/15"); // another definition, the same quotas
    expect(version()).toBe(first);
    await agree(undefined);
    expect(version()).toBeUndefined();
    await agree('{"default":2}');
    expect(version()).toMatch(/\S/);
    expect(version()).not.toBe(first);
    expect(markerRuleOf(fake.objects.get(`${name}.pool`)?.data).quotas?.version).toBe(version());
  });

  it("a stack under the default is counted by its identity: two stacks of one name each get it", async () => {
    const q = { default: 1 };
    const { writes, listed } = await pool(q);
    await put(writes, "10.0.0.1", hold("same", undefined, "id-1"));
    await put(writes, "10.0.0.2", hold("same", undefined, "id-2"));
    expect((await refusal(put(writes, "10.0.0.3", hold("same", undefined, "id-1"))))?.code).toBe(
      "QUOTA_EXCEEDED",
    );
    expect((await refusal(put(writes, "10.0.0.3", hold("same", undefined, "id-2"))))?.code).toBe(
      "QUOTA_EXCEEDED",
    );
    expect(listed(q, "same", "id-1")).toHaveLength(1);
    expect(listed(q, "same", "id-2")).toHaveLength(1);
  });
});

describe("racing", () => {
  it("two stacks of one pattern, 6 entries each from two processes at once, under a limit of 8: 8 held, every other refused", async () => {
    const q = { stacks: { "p/*": 8 } };
    for (let round = 0; round < 12; round++) {
      const { process, listed, live } = await pool(q);
      const [a, b] = [process("https://a"), process("https://b")];
      await Promise.all([a.writes.rule(), b.writes.rule()]); // as the ledger reads it with the pool, first
      const asks = [
        ...Array.from({ length: 6 }, (_, i) => put(a.writes, `10.0.1.${i + 1}`, hold("a"))),
        ...Array.from({ length: 6 }, (_, i) => put(b.writes, `10.0.2.${i + 1}`, hold("b"))),
      ];
      const results = await Promise.allSettled(asks);
      const refused = results.flatMap((r) => (r.status === "rejected" ? [r.reason as { code: string }] : []));
      expect(refused.map((e) => e.code)).toEqual(Array(4).fill("QUOTA_EXCEEDED"));
      const held = (await live()).map((c) => c.ip);
      expect(held).toHaveLength(8);
      expect(
        listed(q, "a")
          .map((n) => n.slice(n.indexOf(".") + 1))
          .sort(),
      ).toEqual(held.sort());
    }
  }, 60_000);

  it("the counter's write carries its resourceVersion: two processes that read it before either writes are not both let in", async () => {
    const q = { stacks: { "p/*": 2 } };
    const { fake, name, process, live } = await pool(q);
    const [a, b] = [process("https://a"), process("https://b")];
    await put(a.writes, "10.0.0.1", hold("a"));
    const counter = counterName(name, quotaGroupOf(q, "o/p/a")!);
    const gates = [fake.gate("update", counter), fake.gate("update", counter)];
    const asks = [put(a.writes, "10.0.0.2", hold("a")), put(b.writes, "10.0.0.3", hold("b"))];
    await Promise.all(gates.map((g) => g.reached)); // both read the counter with one entry
    gates[0]!.open();
    await new Promise((resolve) => setTimeout(resolve, 20));
    gates[1]!.open();
    const results = await Promise.allSettled(asks);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(await live()).toHaveLength(2);
  });

  it("a process's registrations to one counter at once are one write", async () => {
    const q = { default: 16 };
    const { fake, name, writes, listed } = await pool(q);
    await put(writes, "10.0.0.100", hold("a")); // the counter exists, and this process has it
    const before = fake.calls.update ?? 0;
    await Promise.all(Array.from({ length: 15 }, (_, i) => put(writes, `10.0.0.${i + 1}`, hold("a"))));
    expect(listed(q, "a")).toHaveLength(16);
    const objectWrites = 15; // each hold is created lapsed, then written live
    expect((fake.calls.update ?? 0) - before - objectWrites).toBeLessThanOrEqual(5);
    expect(fake.objects.get(counterName(name, quotaGroupOf(q, "o/p/a", "id-a")!))).toBeDefined();
  });
});

describe("crashes, lapsed holds and garbage", () => {
  it("a crash between create and register leaves a lapsed hold that counts nowhere and anyone may take", async () => {
    const q = { default: 2 };
    const { store, writes, listed } = await pool(q);
    await put(writes, "10.0.0.9", hold("a"));
    const orphan = (await store.create("10.0.0.1", { ...hold("a"), expires: Date.now() }))!; // as a crash leaves it
    await put(writes, "10.0.0.2", hold("a")); // the orphan took none of a's room
    expect(listed(q, "a")).toHaveLength(2);
    const taken = await put(writes, "10.0.0.1", { ...hold("b"), takenFrom: "id-a urn:a" }, orphan);
    expect(taken.stack).toBe("o/p/b");
    await put(writes, "10.0.0.3", hold("b"));
    expect(listed(q, "b")).toHaveLength(2);
    expect((await refusal(put(writes, "10.0.0.4", hold("b"))))?.code).toBe("QUOTA_EXCEEDED");
  });

  it("an entry whose object went without unregistering is pruned when room is needed", async () => {
    const q = { default: 2 };
    const { store, writes, listed, name } = await pool(q);
    const gone = await put(writes, "10.0.0.1", hold("a"));
    await put(writes, "10.0.0.2", hold("a"));
    await store.delete(gone); // a release that died before its counter write
    expect(listed(q, "a")).toHaveLength(2);
    await put(writes, "10.0.0.3", hold("a"));
    expect(listed(q, "a")).toEqual([`${name}.10.0.0.2`, `${name}.10.0.0.3`]);
  });

  it("a counter the API server refuses to grow (too large) is pruned of what is gone, then written", async () => {
    const q = { default: 100 };
    const { fake, store, writes, listed, name } = await pool(q);
    const held = [];
    for (let i = 1; i <= 4; i++) held.push(await put(writes, `10.0.0.${i}`, hold("a")));
    for (const c of held.slice(0, 3)) await store.delete(c); // releases that died before their counter write
    expect(listed(q, "a")).toHaveLength(4);
    // Not one byte more fits: the next registration's write is refused as too long, whatever the room.
    const counter = counterName(name, quotaGroupOf(q, "o/p/a", "id-a")!);
    const bytes = Object.values(fake.objects.get(counter)!.data!).reduce((n, v) => n + v.length, 0);
    fake.maxValueBytes.set(counter, bytes);
    await put(writes, "10.0.0.5", hold("a"));
    expect(listed(q, "a")).toEqual([`${name}.10.0.0.4`, `${name}.10.0.0.5`]);
    // What still does not fit once pruned fails naming the counter and what to do.
    const more = [];
    for (let i = 6; i <= 9; i++) more.push(refusal(put(writes, `10.0.0.${i}`, hold("a"))));
    const failed = (await Promise.all(more)).find(Boolean);
    expect(failed?.code).toBe("LEDGER_UNAVAILABLE");
    expect(failed?.message).toMatch(
      /Too long.*; quota counter "q\d+-\w+\.quota-[0-9a-f]{16}" of the default quota in pool "q\d+-\w+" would list \d+ entries \(\d+ bytes\) after dropping those that are gone, and a ConfigMap holds at most 1 MiB: release entries of that group, or ask the pool.s owner to split it with narrower quota patterns$/,
    );
  });

  it("a hold lapsed for over a minute is deleted for the room, so its owner cannot renew it uncounted", async () => {
    const q = { stacks: { "p/*": 1 } };
    const { store, writes } = await pool(q);
    const old = await put(writes, "10.0.0.1", hold("a", longLapsed()));
    const recent = await pool(q);
    await put(recent.writes, "10.0.0.1", hold("a", Date.now() - 1_000)); // lapsed a second ago: in flight, perhaps
    expect((await refusal(put(recent.writes, "10.0.0.2", hold("b"))))?.code).toBe("QUOTA_EXCEEDED");
    await put(writes, "10.0.0.2", hold("b"));
    expect(await store.read("10.0.0.1")).toBeUndefined();
    expect(await refusal(put(writes, "10.0.0.1", hold("a"), old))).toBeDefined(); // no room, or 409: gone
    expect(await store.read("10.0.0.1")).toBeUndefined();
  });

  it("a takeover registers before its write, and a prune meanwhile keeps that registration while the write may land", async () => {
    const { fake, name, writes, live } = await pool({ default: 1 });
    const old = await put(writes, "10.0.0.1", hold("a", Date.now() - 1)); // lapsed just now
    const gate = fake.gate("update", `${name}.10.0.0.1`);
    const takeover = put(writes, "10.0.0.1", { ...hold("b"), takenFrom: "id-a urn:a" }, old);
    await gate.reached; // registered in b's group; its write waits
    // b's next entry finds no room; the prune sees 10.0.0.1 still a's, at the version the takeover names.
    expect((await refusal(put(writes, "10.0.0.2", hold("b"))))?.code).toBe("QUOTA_EXCEEDED");
    gate.open();
    await takeover;
    expect((await live()).map((c) => [c.ip, c.stack])).toEqual([["10.0.0.1", "o/p/b"]]);
  });

  it("another stack's lapsed hold taken over counts in the taker's group, and leaves the holder's when room is needed", async () => {
    const q = { default: 1 };
    const { writes, listed, name } = await pool(q);
    const old = await put(writes, "10.0.0.1", hold("a", Date.now() - 1));
    await put(writes, "10.0.0.1", { ...hold("b"), takenFrom: "id-a urn:a" }, old);
    expect(listed(q, "b")).toEqual([`${name}.10.0.0.1`]);
    expect(listed(q, "a")).toEqual([`${name}.10.0.0.1`]); // counted twice: safe, and only until a needs it
    await put(writes, "10.0.0.2", hold("a"));
    expect(listed(q, "a")).toEqual([`${name}.10.0.0.2`]);
    expect((await refusal(put(writes, "10.0.0.3", hold("b"))))?.code).toBe("QUOTA_EXCEEDED");
  });
});

describe("writes per entry", () => {
  it.each([
    ["no definition", undefined],
    ["no quotas", {}],
    ["quotas of other stacks only", { stacks: { "other/*": 1 } }],
  ])("%s: no counter object, and the writes of before (create, renew, claim, release)", async (_, q) => {
    const { fake, writes, setQuotas } = await pool();
    if (q) await setQuotas(q);
    const counts = () => ({ ...fake.calls });
    const diff = (a: Record<string, number>, b: Record<string, number>) =>
      Object.fromEntries(["create", "update", "delete"].map((v) => [v, (b[v] ?? 0) - (a[v] ?? 0)]));
    const start = counts();
    const h = await put(writes, "10.0.0.1", hold("a"));
    const afterCreate = counts();
    const r = await put(writes, "10.0.0.1", hold("a"), h);
    const c = await put(writes, "10.0.0.1", claim("a"), r);
    const afterClaim = counts();
    await writes.remove(c);
    const end = counts();
    expect(diff(start, afterCreate)).toEqual({ create: 1, update: 0, delete: 0 });
    expect(diff(afterCreate, afterClaim)).toEqual({ create: 0, update: 2, delete: 0 });
    expect(diff(afterClaim, end)).toEqual({ create: 0, update: 0, delete: 1 });
    expect(fake.named("quota")).toEqual([]);
  });

  it("with a quota: a new entry is created lapsed, counted, then written live; renewing and claiming it write it once", async () => {
    const { fake, writes } = await pool({ default: 4 });
    await put(writes, "10.0.0.9", hold("a")); // the counter exists, and this process knows the rule
    const calls = () => ({ ...fake.calls });
    const diff = (a: Record<string, number>, b: Record<string, number>) =>
      Object.fromEntries(["create", "update", "delete"].map((v) => [v, (b[v] ?? 0) - (a[v] ?? 0)]));
    const steps: Record<string, number>[] = [];
    let before = calls();
    const step = () => {
      const now = calls();
      steps.push(diff(before, now));
      before = now;
    };
    const h = await put(writes, "10.0.0.1", hold("a"));
    step();
    const c = await put(writes, "10.0.0.1", claim("a"), await put(writes, "10.0.0.1", hold("a"), h));
    step();
    await writes.remove(c);
    step();
    expect(steps).toEqual([
      { create: 1, update: 2, delete: 0 }, // the object, the counter, the object live
      { create: 0, update: 2, delete: 0 }, // renewed, claimed: the counter lists it already
      { create: 0, update: 1, delete: 1 }, // the object, then the counter
    ]);
  });
});
