// The Lease lock against the real kube-apiserver: takeover of a killed holder only after the lock
// duration, a fresh Lease never stolen, timeouts naming the holder, refcounting, and a paused holder
// that resumes unable to write over the new holder's claims.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leaseLocker } from "../../../provider/ledger/kubernetes/lease-lock";
import { ClaimStore } from "../../../provider/ledger/kubernetes/claim-store";
import { kubeClients } from "../../../provider/kube/kube-config";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../../support/kube";
import { LedgerWorker } from "../../support/ledger-worker";

const lockDuration = 2_000;
const clients = () => {
  process.env.KUBECONFIG = testKubeconfig();
  return kubeClients({ context: "admin@test" });
};
const lockerFor = (namespace: string, name: string, identity: string, timeout = 20_000) =>
  leaseLocker({
    clients: clients(),
    config: { id: name, namespace, lockDuration, lockAcquireTimeout: timeout },
    identity,
  });
const readLease = (namespace: string, name: string) =>
  kube().coordination.readNamespacedLease({ name, namespace });

describe("leaseLocker", () => {
  let ns = "";
  const workers: LedgerWorker[] = [];
  const worker = async () => {
    const w = await LedgerWorker.start();
    workers.push(w);
    return w;
  };
  beforeAll(async () => {
    ns = await freshNamespace("lease");
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await kube().core.deleteNamespace({ name: ns });
  });

  it("creates a fresh Lease with its times and leaves it free after the last release", async () => {
    const name = uniqueName("l");
    const a = lockerFor(ns, name, "test/a");
    await a.acquire();
    await a.acquire(); // re-entrant: counted
    const lease = await readLease(ns, name);
    expect(lease.spec?.holderIdentity).toBe("test/a");
    expect(lease.spec?.acquireTime).toBeTruthy();
    expect(lease.spec?.renewTime).toBeTruthy();
    expect(lease.spec?.leaseDurationSeconds).toBe(2);
    await a.release();
    expect((await readLease(ns, name)).spec?.holderIdentity).toBe("test/a");
    await a.release();
    expect((await readLease(ns, name)).spec?.holderIdentity).toBeFalsy();
    await a.release(); // harmless when not held
  });

  it("a fresh Lease held by another process is not stolen: the timeout names the holder and since when", async () => {
    const name = uniqueName("l");
    const holder = await worker();
    const got = await holder.send({
      op: "lock",
      namespace: ns,
      name,
      lockDuration,
      lockAcquireTimeout: 5_000,
    });
    expect(got.ok).toBe(true);
    const b = lockerFor(ns, name, "test/b", 1_000); // shorter than the lock duration
    const err = await b.acquire().then(
      () => undefined,
      (e: unknown) => e as { code: string; message: string },
    );
    expect(err?.code).toBe("LOCK_TIMEOUT");
    expect(err?.message).toContain(`held by ${String(got.identity)} since `);
    expect((await readLease(ns, name)).spec?.holderIdentity).toBe(got.identity);
    // Held and renewed past its duration: still not stolen.
    await new Promise((r) => setTimeout(r, lockDuration * 1.5));
    const again = await lockerFor(ns, name, "test/b2", 500)
      .acquire()
      .then(
        () => "acquired",
        (e: { code: string }) => e.code,
      );
    expect(again).toBe("LOCK_TIMEOUT");
    await holder.send({ op: "unlock" });
  });

  it("takes over from a SIGKILLed holder after the lock duration, not before", async () => {
    const name = uniqueName("l");
    const holder = await worker();
    const got = await holder.send({
      op: "lock",
      namespace: ns,
      name,
      lockDuration,
      lockAcquireTimeout: 5_000,
    });
    expect(got.ok).toBe(true);
    holder.signal("SIGKILL");
    await holder.exited;
    const before = (await readLease(ns, name)).spec!;
    const started = performance.now();
    await lockerFor(ns, name, "test/c").acquire();
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(lockDuration);
    const after = (await readLease(ns, name)).spec!;
    expect(after.holderIdentity).toBe("test/c");
    expect(after.leaseTransitions).toBe((before.leaseTransitions ?? 0) + 1);
  });

  it("judges a Lease without times (as webmesh leaves them) by its own observation, not as expired", async () => {
    const name = uniqueName("l");
    await kube().coordination.createNamespacedLease({
      namespace: ns,
      body: { metadata: { name }, spec: { holderIdentity: "webmesh-node", leaseDurationSeconds: 2 } },
    });
    const started = performance.now();
    await lockerFor(ns, name, "test/d").acquire();
    expect(performance.now() - started).toBeGreaterThanOrEqual(2_000);
    expect((await readLease(ns, name)).spec?.holderIdentity).toBe("test/d");
  });

  it("a paused holder that resumes cannot write over the new holder's claims", async () => {
    const name = uniqueName("l");
    const pool = uniqueName("p");
    const store = new ClaimStore(clients(), ns, pool);
    const fields = (owner: string) => ({
      state: "claim" as const,
      stack: "o/p/s",
      owner,
      seq: 1,
      expires: 0,
    });
    expect(await store.create("10.9.0.1", fields("old"))).toBeTruthy();

    const paused = await worker();
    await paused.send({ op: "lock", namespace: ns, name, lockDuration, lockAcquireTimeout: 5_000 });
    const read = await paused.send({ op: "read", namespace: ns, pool });
    expect((read.claims as unknown[]).length).toBe(1);
    paused.signal("SIGSTOP");

    // The new holder takes over once the paused one's tenure lapsed, and writes.
    const started = performance.now();
    await lockerFor(ns, name, "test/e").acquire();
    expect(performance.now() - started).toBeGreaterThanOrEqual(lockDuration);
    const [first] = await store.list();
    await store.replace(first!, fields("new"));
    expect(await store.create("10.9.0.2", fields("new"))).toBeTruthy();

    paused.signal("SIGCONT");
    const wrote = await paused.send({ op: "write", ip: "10.9.0.2", stack: "o/p/s", owner: "paused" });
    expect(wrote).toMatchObject({ ok: true, created: false, replaced: [409] });
    const owners = (await store.list()).map((c) => [c.ip, c.owner]).sort();
    expect(owners).toEqual([
      ["10.9.0.1", "new"],
      ["10.9.0.2", "new"],
    ]);
    // Its renewal finds the Lease held by someone else: a re-entrant acquire does not count on it.
    const relock = await paused.send({
      op: "lock",
      namespace: ns,
      name,
      lockDuration,
      lockAcquireTimeout: 500,
    });
    expect(relock).toMatchObject({ ok: false, code: "LOCK_TIMEOUT" });
    expect(relock.message).toContain("held by test/e");
  });
});
