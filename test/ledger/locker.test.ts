import { afterEach, describe, expect, it, vi } from "vitest";
import { isIpamError } from "../../provider/allocator";
import { endProcess } from "../../provider/core/process-ending";
import { forget } from "../../provider/core/process-registry";
import { inProcessLocker, withLock, type LockConfig } from "../../provider/ledger/locker";

let n = 0;
const config = (over: Partial<LockConfig> = {}): LockConfig => ({
  id: `org/proj/stack/pool-${n++}`,
  namespace: "",
  lockDuration: 10_000,
  lockAcquireTimeout: 1_000,
  ...over,
});
const tick = () => new Promise((r) => setTimeout(r, 5));

describe("in-process locker", () => {
  it("serializes holders of one id and serves waiters in arrival order", async () => {
    const c = config();
    const order: string[] = [];
    const a = inProcessLocker(c, "a");
    await a.acquire();
    const waiting = ["b", "c", "d"].map((name) =>
      withLock(inProcessLocker(c, name), async () => {
        order.push(`${name}+`);
        await tick();
        order.push(`${name}-`);
      }),
    );
    await tick();
    expect(order).toEqual([]);
    await a.release();
    await Promise.all(waiting);
    expect(order).toEqual(["b+", "b-", "c+", "c-", "d+", "d-"]);
  });

  it("does not block holders of other ids", async () => {
    const a = inProcessLocker(config(), "a");
    const b = inProcessLocker(config(), "b");
    await a.acquire();
    await b.acquire();
    await Promise.all([a.release(), b.release()]);
  });

  it("counts nested acquires by one holder and frees at zero", async () => {
    const c = config({ lockAcquireTimeout: 50 });
    const a = inProcessLocker(c, "a");
    await a.acquire();
    await a.acquire();
    await a.release();
    await expect(inProcessLocker(c, "b").acquire()).rejects.toSatisfy((e) => isIpamError(e, "LOCK_TIMEOUT"));
    await a.release();
    const b = inProcessLocker(c, "b");
    await b.acquire();
    await b.release();
  });

  it("ignores releasing a lock that is not held", async () => {
    const c = config();
    const a = inProcessLocker(c, "a");
    await a.release();
    const b = inProcessLocker(c, "b");
    await b.acquire();
    await a.release(); // not a's lock: b keeps it
    const c2 = inProcessLocker({ ...c, lockAcquireTimeout: 30 }, "c");
    await expect(c2.acquire()).rejects.toSatisfy((e) => isIpamError(e, "LOCK_TIMEOUT"));
    await b.release();
  });

  it("times out naming the lock and its holder", async () => {
    const c = config({ lockAcquireTimeout: 40 });
    const a = inProcessLocker(c, 'IpAllocation "web" create');
    await a.acquire();
    const err = await inProcessLocker(c, "b")
      .acquire()
      .catch((e: unknown) => e);
    expect(isIpamError(err, "LOCK_TIMEOUT")).toBe(true);
    expect((err as Error).message).toContain(c.id);
    expect((err as Error).message).toContain('held by IpAllocation "web" create');
    await a.release();
    // the timed-out waiter left the queue: the lock is free for a newcomer at once
    const d = inProcessLocker(c, "d");
    await d.acquire();
    await d.release();
  });

  it("hands the lock over when a holder exceeds lockDuration", async () => {
    // Only the hung holder's lease is short: b's own lease cannot lapse before c asks, however slow
    // the machine.
    const c = config({ lockDuration: 300, lockAcquireTimeout: 2_000 });
    const hung = inProcessLocker(c, "hung");
    await hung.acquire();
    const b = inProcessLocker({ ...c, lockDuration: 60_000 }, "b");
    const started = Date.now();
    await b.acquire();
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    await hung.release(); // late release of an expired lock must not free b's lock
    await expect(inProcessLocker({ ...c, lockAcquireTimeout: 10 }, "c").acquire()).rejects.toSatisfy((e) =>
      isIpamError(e, "LOCK_TIMEOUT"),
    );
    await b.release();
  });

  it("stops waiting when the signal aborts, and releases on every error path of withLock", async () => {
    const c = config();
    const a = inProcessLocker(c, "a");
    await a.acquire();
    const ac = new AbortController();
    const waiting = inProcessLocker(c, "b").acquire(ac.signal);
    ac.abort(new Error("cancelled"));
    await expect(waiting).rejects.toThrow("cancelled");
    await a.release();
    await expect(
      withLock(inProcessLocker(c, "c"), async () => Promise.reject(new Error("boom"))),
    ).rejects.toThrow("boom");
    const d = inProcessLocker({ ...c, lockAcquireTimeout: 20 }, "d");
    await d.acquire(); // free again after the failing holder
    await d.release();
  });

  it("shares one lock across separately loaded copies of the module", async () => {
    const c = config({ lockAcquireTimeout: 30 });
    vi.resetModules();
    const copy = await import("../../provider/ledger/locker");
    expect(copy.inProcessLocker).not.toBe(inProcessLocker);
    const a = inProcessLocker(c, "a");
    await a.acquire();
    await expect(copy.inProcessLocker(c, "b").acquire()).rejects.toSatisfy((e: unknown) =>
      isIpamError(e, "LOCK_TIMEOUT"),
    );
    await a.release();
  });
});

describe("a lock wait when the process ends (its engine is gone)", () => {
  afterEach(() => forget("process", "ending"));

  it("rejects the waiting holder at once with the reason, and lets the holder that has the lock finish", async () => {
    const c = config({ lockAcquireTimeout: 60_000 });
    const order: string[] = [];
    let finish!: () => void;
    const holding = withLock(inProcessLocker(c, "a"), async () => {
      order.push("a+");
      await new Promise<void>((r) => (finish = r));
      order.push("a-");
    });
    await tick();
    const waiting = withLock(inProcessLocker(c, "b"), async () => order.push("b+"));
    await tick();
    endProcess(new Error("the engine at 127.0.0.1:1 is gone"));
    await expect(waiting).rejects.toThrow("the engine at 127.0.0.1:1 is gone");
    finish();
    await holding;
    expect(order).toEqual(["a+", "a-"]);
    // Once ended, a new wait gives up before it takes the lock.
    await expect(withLock(inProcessLocker(c, "c"), async () => order.push("c+"))).rejects.toThrow("is gone");
    expect(order).toEqual(["a+", "a-"]);
  });
});
