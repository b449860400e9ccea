import { IpamError } from "../core/ipam-error";
import { retrying } from "../core/retry";
import { isConflict } from "./kube-errors";

/** How often and how long a read-modify-write is retried when the API server answers 409. */
export interface ConflictRetryPolicy {
  /** Attempts in all, the first included (default 8). */
  attempts: number;
  /** First backoff; doubled per attempt, with full jitter (default 50 ms). */
  baseMs: number;
  /** Largest backoff (default 2 s). */
  maxMs: number;
  /**
   * Keep retrying past `attempts` while less than this has passed since the first attempt (default
   * 0: `attempts` alone bounds it). For a batch of many callers' changes to one object: every 409 is
   * another writer's success, so losing often is progress elsewhere, not a reason to fail them all.
   */
  budgetMs?: number;
}

/** The default: 8 attempts, 50 ms doubling to at most 2 s, full jitter (about 5 s at worst). */
export const defaultConflictRetry: ConflictRetryPolicy = { attempts: 8, baseMs: 50, maxMs: 2_000 };

/**
 * Runs `attempt` (a read, a change and a write carrying the `resourceVersion` read) until it does
 * not fail with 409 Conflict, waiting a jittered, doubling backoff between attempts. Other errors
 * are thrown at once. Bounded: after `policy.attempts` conflicts it throws IpamError `CONFLICT`
 * naming `what` and how many writers' changes it lost to.
 */
export async function retryOnConflict<T>(
  what: string,
  attempt: (n: number) => Promise<T>,
  policy: Partial<ConflictRetryPolicy> = {},
  signal?: AbortSignal,
): Promise<T> {
  const p = { ...defaultConflictRetry, ...policy };
  return retrying((n) => attempt(n), {
    baseMs: p.baseMs,
    maxMs: p.maxMs,
    ...(signal ? { signal } : {}),
    retryable: (err, n, _delay, elapsed) => {
      if (!isConflict(err)) return false;
      if (n >= p.attempts && elapsed >= (p.budgetMs ?? 0)) {
        throw new IpamError(
          "CONFLICT",
          `${what}: the object changed under ${n} attempts in a row (409 Conflict each time` +
            `${p.budgetMs ? `, ${Math.round(elapsed / 1000)} s` : ""}); ` +
            `another writer is updating it constantly: try again, or find that writer`,
        );
      }
      return true;
    },
  });
}
