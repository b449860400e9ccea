// The Kubernetes ledger against the real kube-apiserver: concurrent planners in two processes, the
// hold → claim protocol, owner-preconditioned release, lapsed holds, 409 paths forced on purpose,
// and LEDGER_UNAVAILABLE for forbidden and unreachable API servers.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { kubeClients, type KubeClients } from "../../../provider/kube/kube-config";
import { kubeLedger, type KubeLedgerOptions } from "../../../provider/ledger/kubernetes/kube-ledger";
import { claimView } from "../../../provider/ledger/kubernetes/claim-view";
import { poolChooser, resolvePool } from "../../../provider/resources/pool/pool-spec";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../../support/kube";
import { LedgerWorker } from "../../support/ledger-worker";

const admin = (): KubeClients => {
  process.env.KUBECONFIG = testKubeconfig();
  return kubeClients({ context: "admin@test" });
};
const choose = (subnet: string) => poolChooser(resolvePool({ ranges: [{ subnet }] }).pool!);
const urn = (name: string) => `urn:pulumi:s::p::egress-ipam:IpAllocation::${name}`;
const errorOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as { code: string; message: string },
  );

describe("kubeLedger", () => {
  let ns = "";
  const ledger = (stack: string, pool: string, more: Partial<KubeLedgerOptions> = {}) =>
    kubeLedger({
      stack,
      clients: admin(),
      ledger: { name: pool, namespace: ns, lockDuration: 10_000, lockAcquireTimeout: 60_000 },
      ...more,
    });
  beforeAll(async () => {
    ns = await freshNamespace("ledger");
  });
  afterAll(() => kube().core.deleteNamespace({ name: ns }));

  it("two processes × 200 concurrent plans: 400 distinct addresses, one object each", async () => {
    const pool = uniqueName("p");
    const [a, b] = await Promise.all([LedgerWorker.start(), LedgerWorker.start()]);
    try {
      const plan = { op: "plan", namespace: ns, pool, subnet: "10.20.0.0/23", count: 200 };
      const [ra, rb] = await Promise.all([
        a.send({ ...plan, stack: "o/p/a" }),
        b.send({ ...plan, stack: "o/p/b" }),
      ]);
      expect(ra.ok && rb.ok).toBe(true);
      const ips = [...(ra.ips as string[]), ...(rb.ips as string[])];
      expect(new Set(ips).size).toBe(400);
      const claims = await ledger("o/p/x", pool).store.list();
      expect(claims.length).toBe(400);
      expect(new Set(claims.map((c) => c.ip))).toEqual(new Set(ips));
      expect(
        claims
          .filter((c) => c.stack === "o/p/a")
          .map((c) => c.ip)
          .sort(),
      ).toEqual([...(ra.ips as string[])].sort());
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 600_000); // a hang guard: 400 plans over a loaded 2-core machine

  it("holds at plan, claims at reserve, and an owner planning again gets what it holds", async () => {
    const pool = uniqueName("p");
    const l = ledger("o/p/a", pool);
    const req = { pool: "x", owner: urn("web"), choose: choose("10.1.0.0/29") };
    const planned = await l.plan(req);
    expect(planned.ips).toEqual(["10.1.0.2"]);
    expect((await l.store.read("10.1.0.2"))?.state).toBe("hold");
    expect(await ledger("o/p/a", pool).plan(req)).toEqual(planned); // another process, same owner
    const other = await ledger("o/p/b", pool).plan({ ...req, owner: urn("web") });
    expect(other.ips).toEqual(["10.1.0.3"]); // same URN, other stack: another holder
    await l.reserve("x", req.owner, planned);
    expect((await l.store.read("10.1.0.2"))?.state).toBe("claim");
    // Release is preconditioned on the owner: another stack's release frees nothing of it.
    await ledger("o/p/b", pool).release("x", req.owner, ["10.1.0.2"]);
    expect((await l.store.read("10.1.0.2"))?.owner).toBe(req.owner);
    await l.release("x", req.owner);
    expect(await l.store.read("10.1.0.2")).toBeUndefined();
  });

  it("plans of two stacks arriving together in one process are each their own stack's", async () => {
    const pool = uniqueName("p");
    const c = choose("10.1.0.0/26");
    const plans = await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const stack = i % 2 === 0 ? "o/p/even" : "o/p/odd";
        return ledger(stack, pool)
          .plan({ pool: "x", owner: urn(`h${i}`), choose: c })
          .then((p) => ({ stack, ip: p.ips[0]! }));
      }),
    );
    expect(new Set(plans.map((p) => p.ip)).size).toBe(20);
    const claims = new Map((await ledger("o/p/x", pool).store.list()).map((cl) => [cl.ip, cl.stack]));
    expect(plans.map((p) => claims.get(p.ip))).toEqual(plans.map((p) => p.stack));
  });

  it("a view behind the API server (fault-injected: a claim dropped from it) loses the race and plans the next address", async () => {
    const pool = uniqueName("p");
    const a = ledger("o/p/a", pool);
    const req = { pool: "x", owner: urn("a"), choose: choose("10.1.0.0/29") };
    expect((await a.plan(req)).ips).toEqual(["10.1.0.2"]);
    // Another stack's claim of .3 that this process's view has not seen.
    const fields = { state: "claim" as const, stack: "o/p/other", owner: urn("z"), seq: 9, expires: 0 };
    await a.store.create("10.1.0.3", fields);
    const view = claimView(a.store);
    // After the watch delivered it (so nothing re-adds it), the view forgets it: a missed event.
    await vi.waitFor(() => expect(view.known("10.1.0.3")).toBeDefined());
    view.record("10.1.0.3", undefined);
    const b = await ledger("o/p/b", pool).plan({ ...req, owner: urn("b") });
    expect(b.ips).toEqual(["10.1.0.4"]);
    expect(await a.store.read("10.1.0.3")).toMatchObject({
      stack: "o/p/other",
      owner: urn("z"),
      state: "claim",
    });
    expect((await a.store.read("10.1.0.4"))?.stack).toBe("o/p/b");
  });

  it("refuses a requested address another stack holds, naming that stack", async () => {
    const pool = uniqueName("p");
    await ledger("o/p/a", pool).plan({
      pool: "x",
      owner: urn("a"),
      requested: ["10.1.0.5"],
      choose: choose("10.1.0.0/29"),
    });
    const err = await errorOf(
      ledger("o/p/b", pool).plan({
        pool: "x",
        owner: urn("b"),
        requested: ["10.1.0.5"],
        choose: choose("10.1.0.0/29"),
      }),
    );
    expect(err?.code).toBe("IP_UNAVAILABLE");
    expect(err?.message).toContain(`${urn("a")} of stack o/p/a`);
  });

  it("a lapsed hold is taken over; its owner's create fails naming the new holder, its next plan says so once", async () => {
    const pool = uniqueName("p");
    const a = ledger("o/p/a", pool, { holdDuration: 1 });
    const req = { pool: "x", owner: urn("a"), choose: choose("10.1.0.0/29") };
    const planned = await a.plan(req); // as at preview
    expect(planned.ips).toEqual(["10.1.0.2"]);
    await new Promise((r) => setTimeout(r, 20));
    const b = ledger("o/p/b", pool);
    const taken = await b.plan({ ...req, owner: urn("b") });
    expect(taken.ips).toEqual(planned.ips);
    await b.reserve("x", urn("b"), taken);
    expect((await b.store.read("10.1.0.2"))?.takenFrom).toBe(`o/p/a ${urn("a")}`);
    const err = await errorOf(a.reserve("x", req.owner, planned));
    expect(err?.code).toBe("IP_UNAVAILABLE");
    expect(err?.message).toContain(`taken by ${urn("b")} of stack o/p/b`);
    expect((await b.store.read("10.1.0.2"))?.owner).toBe(urn("b"));
    // The next check fails naming the taker, and holds another address for the one after it.
    const again = await errorOf(a.plan(req));
    expect(again?.code).toBe("IP_UNAVAILABLE");
    expect(again?.message).toMatch(
      /10\.1\.0\.2 .* was taken by .* of stack o\/p\/b .*10\.1\.0\.3 is held for it now/,
    );
    expect((await a.plan(req)).ips).toEqual(["10.1.0.3"]);
  });

  it("a create whose second address went to another stack leaves no claim of the first (dual stack)", async () => {
    const pool = uniqueName("p");
    const a = ledger("o/p/a", pool, { holdDuration: 1 });
    const req = {
      pool: "x",
      owner: urn("a"),
      requested: ["10.1.0.2", "10.1.0.3"],
      choose: choose("10.1.0.0/29"),
    };
    const planned = await a.plan(req); // as at preview: a hold per address
    await new Promise((r) => setTimeout(r, 20)); // both lapse
    const b = ledger("o/p/b", pool);
    const taken = await b.plan({ ...req, owner: urn("b"), requested: ["10.1.0.3"] });
    await b.reserve("x", urn("b"), taken);
    const err = await errorOf(a.reserve("x", req.owner, planned, false, "instance-a"));
    expect(err?.code).toBe("IP_UNAVAILABLE");
    // The first address is as a's plan left it (its hold), not a claim that no resource's state records.
    const first = await a.store.read("10.1.0.2");
    expect(first?.state).toBe("hold");
    expect(first?.owner).toBe(urn("a"));
    expect(first?.instance).toBeUndefined();
    expect((await a.store.read("10.1.0.3"))?.owner).toBe(urn("b"));
  });

  it("retries a write that meets a stale resourceVersion (forced), and gives up with CONFLICT", async () => {
    const pool = uniqueName("p");
    const clients = admin();
    const l = ledger("o/p/a", pool);
    const req = { pool: "x", owner: urn("a"), choose: choose("10.1.0.0/29") };
    const planned = await l.plan(req);
    // Every read of the claim is followed by another writer's change before the ledger writes.
    let bumps = 0;
    let limit = 1;
    const core = new Proxy(clients.core, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== "readNamespacedConfigMap")
          return typeof value === "function" ? value.bind(target) : value;
        return async (args: { name: string; namespace: string }) => {
          const read = await target.readNamespacedConfigMap(args);
          if (bumps < limit) {
            bumps++;
            const fresh = await kube().core.readNamespacedConfigMap(args);
            fresh.metadata!.annotations = { bumped: String(bumps) };
            await kube().core.replaceNamespacedConfigMap({ ...args, body: fresh });
          }
          return read;
        };
      },
    });
    const racing = ledger("o/p/a", pool, { clients: { ...clients, core } });
    await racing.reserve("x", req.owner, planned);
    expect(bumps).toBe(1);
    expect((await l.store.read(planned.ips[0]!))?.state).toBe("claim");

    limit = Infinity;
    const err = await errorOf(racing.release("x", req.owner, planned.ips));
    expect(err?.code).toBe("CONFLICT");
    expect(bumps).toBeGreaterThan(2);
    expect((await l.store.read(planned.ips[0]!))?.owner).toBe(req.owner); // nothing deleted blindly
  });

  it("fails with LEDGER_UNAVAILABLE naming server, namespace and permission when access is forbidden", async () => {
    process.env.KUBECONFIG = testKubeconfig();
    const limited = kubeClients({ context: "limited@test" });
    const l = kubeLedger({
      stack: "o/p/a",
      clients: limited,
      ledger: { name: uniqueName("p"), namespace: ns, lockDuration: 10_000, lockAcquireTimeout: 5_000 },
    });
    const err = await errorOf(l.plan({ pool: "x", owner: urn("a"), choose: choose("10.1.0.0/29") }));
    expect(err?.code).toBe("LEDGER_UNAVAILABLE");
    expect(err?.message).toContain(limited.server);
    expect(err?.message).toContain(`namespace "${ns}"`);
    expect(err?.message).toMatch(/403 Forbidden: .*User "limited" cannot get resource "leases"/);
  });

  it("fails with LEDGER_UNAVAILABLE naming the server when it is unreachable", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kc-"));
    const file = path.join(dir, "config");
    const text = fs
      .readFileSync(testKubeconfig(), "utf8")
      .replace(/server: https:\/\/127\.0\.0\.1:\d+/, "server: https://127.0.0.1:9");
    fs.writeFileSync(file, text);
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = file;
    try {
      const l = kubeLedger({
        stack: "o/p/a",
        ledger: { name: uniqueName("p"), namespace: ns, lockDuration: 10_000, lockAcquireTimeout: 5_000 },
      });
      const err = await errorOf(l.plan({ pool: "x", owner: urn("a"), choose: choose("10.1.0.0/29") }));
      expect(err?.code).toBe("LEDGER_UNAVAILABLE");
      expect(err?.message).toContain("https://127.0.0.1:9");
      expect(err?.message).toContain("reachable");
    } finally {
      process.env.KUBECONFIG = saved;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
