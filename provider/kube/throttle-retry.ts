import { retrying, sleep } from "../core/retry";
import { kubeStatus } from "./kube-errors";

/** How a request the API server throttled (429 Too Many Requests) is retried. */
export interface ThrottleRetryPolicy {
  /** Attempts in all, the first included (default 6). */
  attempts: number;
  /** First wait when the server gives no Retry-After; doubled per attempt (default 250 ms). */
  baseMs: number;
  /** Longest wait, whatever Retry-After says (default 5 s). */
  maxMs: number;
}

/** The default: 6 attempts, 250 ms doubling (or the server's Retry-After), at most 5 s a wait. */
export const defaultThrottleRetry: ThrottleRetryPolicy = { attempts: 6, baseMs: 250, maxMs: 5_000 };

/** Seconds of a 429's Retry-After header, when the client error carries one. */
function retryAfterMs(err: unknown): number | undefined {
  const headers = (err as { headers?: Record<string, string> })?.headers;
  const value = headers?.["retry-after"] ?? headers?.["Retry-After"];
  const seconds = Number(value);
  return value !== undefined && Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

/**
 * An API client whose asynchronous methods retry a 429 Too Many Requests, as client-go does: the
 * API server sends it before handling a request (API Priority and Fairness, or CRD storage that is
 * still initializing), so sending the same request again is safe for every verb. Waits the
 * server's Retry-After (or a doubling backoff), bounded by `policy`; the last 429 is thrown as is.
 * Synchronous methods and properties pass through unchanged.
 */
export function retryingThrottled<T extends object>(
  api: T,
  policy: ThrottleRetryPolicy = defaultThrottleRetry,
  wait: (ms: number) => Promise<void> = sleep,
): T {
  return new Proxy(api, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const call = () => (value as (...a: unknown[]) => unknown).apply(target, args);
        const first = call();
        if (!(first instanceof Promise)) return first;
        return retrying((attempt) => (attempt === 1 ? first : (call() as Promise<unknown>)), {
          baseMs: policy.baseMs,
          maxMs: policy.maxMs,
          jitter: false,
          wait,
          retryable: (err, attempt) => {
            if (kubeStatus(err).code !== 429 || attempt >= policy.attempts) return false;
            const after = retryAfterMs(err);
            return after === undefined ? true : Math.min(after, policy.maxMs);
          },
        });
      };
    },
  });
}
