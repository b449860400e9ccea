import { IpamError } from "../allocator";
import { processEnding } from "../core/process-ending";
import { shared } from "../core/process-registry";

/** Lock settings, as webmesh's `LockConfig`. Durations are milliseconds. */
export interface LockConfig {
  /** Lock name; for the in-process lock, the scope `<org>/<project>/<stack>/<pool>`. */
  id: string;
  /** Namespace of the lock object (Kubernetes ledgers); informational in-process. */
  namespace: string;
  /** How long a holder keeps the lock without releasing it before others may take it over. */
  lockDuration: number;
  /** How long `acquire` waits before failing with `LOCK_TIMEOUT`. */
  lockAcquireTimeout: number;
}

/**
 * A reference-counted lock, as webmesh's `Locker`: `acquire` by a holder that already has the lock
 * increments a count, `release` decrements it and frees the lock at zero, and releasing a lock
 * that is not held does nothing.
 */
export interface Locker {
  /**
   * Takes the lock, waiting up to `lockAcquireTimeout`.
   * @throws IpamError `LOCK_TIMEOUT` naming the lock and its holder; the signal's reason when aborted.
   */
  acquire(signal?: AbortSignal): Promise<void>;
  /** Gives up one reference; harmless when not held. */
  release(): Promise<void>;
}

/** Default lock settings for pools in one stack: generous, since the provider is one process. */
export const defaultLockTimings = { lockDuration: 120_000, lockAcquireTimeout: 60_000 } as const;

interface Holder {
  token: object;
  name: string;
  since: number;
  expiresAt: number;
}

interface Waiter {
  token: object;
  name: string;
  duration: number;
  grant: () => void;
}

/** State of one lock id, shared by every Locker of that id in the process. */
class ScopeLock {
  holder?: Holder;
  readonly waiters: Waiter[] = [];
  private expiryTimer?: NodeJS.Timeout;

  take(w: Omit<Waiter, "grant">): void {
    const now = Date.now();
    this.holder = { token: w.token, name: w.name, since: now, expiresAt: now + w.duration };
    this.armExpiry();
  }

  /** Frees the lock and hands it to the first waiter, so waiters are served in arrival order. */
  free(): void {
    this.holder = undefined;
    clearTimeout(this.expiryTimer);
    const next = this.waiters.shift();
    if (next) {
      this.take(next);
      next.grant();
    }
  }

  // A holder that never releases (a hung call) must not block the deployment forever.
  private armExpiry(): void {
    clearTimeout(this.expiryTimer);
    const holder = this.holder!;
    this.expiryTimer = setTimeout(() => this.holder === holder && this.free(), holder.expiresAt - Date.now());
    this.expiryTimer.unref();
  }
}

/**
 * The in-process lock: one per holder (an operation), sharing the scope's state with every other
 * holder of the same `config.id` in this process, including provider code deserialized separately.
 * @param holder - who holds it, for error messages (e.g. `IpAllocation "web-1" create`).
 */
export function inProcessLocker(config: LockConfig, holder: string): Locker {
  const token = {};
  let count = 0;
  const lock = shared("lock", config.id, () => new ScopeLock());
  const held = () => lock.holder?.token === token;

  return {
    async acquire(signal) {
      signal?.throwIfAborted();
      if (count > 0 && held()) {
        count++;
        return;
      }
      if (!lock.holder) {
        lock.take({ token, name: holder, duration: config.lockDuration });
        count = 1;
        return;
      }
      await new Promise<void>((resolve, reject) => {
        const waiter: Waiter = {
          token,
          name: holder,
          duration: config.lockDuration,
          grant: () => done(resolve),
        };
        const leave = (err: unknown) => {
          const i = lock.waiters.indexOf(waiter);
          if (i >= 0) lock.waiters.splice(i, 1);
          done(() => reject(err));
        };
        const onAbort = () => leave(signal?.reason);
        const timer = setTimeout(() => leave(timeoutError(config, lock.holder)), config.lockAcquireTimeout);
        const done = (settle: () => void) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          settle();
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        lock.waiters.push(waiter);
      });
      count = 1;
    },
    async release() {
      if (count === 0) return;
      count--;
      if (count === 0 && held()) lock.free();
    },
  };
}

function timeoutError(config: LockConfig, holder: Holder | undefined): IpamError {
  const by = holder
    ? `held by ${holder.name} for ${((Date.now() - holder.since) / 1000).toFixed(1)} s`
    : "free again, but not in time";
  return new IpamError(
    "LOCK_TIMEOUT",
    `timed out after ${config.lockAcquireTimeout} ms waiting for lock "${config.id}" (${by}); ` +
      `retry, or raise lockAcquireTimeout if the holder is legitimately slow`,
  );
}

/**
 * Runs `fn` with the lock held, releasing it on every path. The wait for the lock also ends when the
 * process does ({@link processEnding}): nobody would read what `fn` returns.
 */
export async function withLock<T>(locker: Locker, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  const ending = processEnding();
  await locker.acquire(signal ? AbortSignal.any([signal, ending]) : ending);
  try {
    return await fn();
  } finally {
    await locker.release();
  }
}
