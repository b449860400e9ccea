/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** An exponential backoff: the wait before attempt `n + 1` is at most `baseMs · 2^(n−1)`, capped. */
export interface Backoff {
  /** Ceiling of the first wait, in milliseconds; it doubles per attempt. */
  baseMs: number;
  /** Largest ceiling, in milliseconds. */
  maxMs: number;
  /** `true` (default): full jitter, a random wait below the ceiling; `false`: the ceiling itself. */
  jitter?: boolean;
}

/** The wait after failed attempt `attempt` (1-based) under `backoff`, in whole milliseconds. */
export function backoffDelay(backoff: Backoff, attempt: number): number {
  const ceiling = Math.min(backoff.maxMs, backoff.baseMs * 2 ** (attempt - 1));
  return backoff.jitter === false ? ceiling : Math.round(Math.random() * ceiling);
}

/** How {@link retrying} retries. */
export interface RetryOptions extends Backoff {
  /**
   * Whether the error of attempt `attempt` is worth another attempt: `false` throws it, `true`
   * waits the backoff's `delayMs`, a number waits that many milliseconds instead (a server's
   * Retry-After). Throwing replaces the error, e.g. with one that says the attempts ran out.
   * `elapsedMs` is the time since the first attempt started.
   */
  retryable: (err: unknown, attempt: number, delayMs: number, elapsedMs: number) => boolean | number;
  /** Stops both the waits and further attempts; the signal's reason is thrown. */
  signal?: AbortSignal;
  /** Called before each wait, e.g. to log or count. */
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
  /** The wait; default {@link sleep} (tests pass a fake). */
  wait?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * Runs `call` until it succeeds or `opts.retryable` gives up, waiting a bounded, jittered,
 * abortable backoff between attempts. The one retry loop of the package: EC2 calls, Kubernetes
 * 409 Conflicts and 429 throttling, and stack exports all go through it, each with its own rule
 * of what is worth retrying and how often.
 * @throws the last error, what `retryable` throws instead, or the signal's reason when it aborts.
 */
export async function retrying<T>(
  call: (attempt: number, signal?: AbortSignal) => Promise<T>,
  opts: RetryOptions,
): Promise<T> {
  const { signal, wait = sleep } = opts;
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted();
    try {
      return await call(attempt, signal);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      const delay = backoffDelay(opts, attempt);
      const verdict = opts.retryable(err, attempt, delay, Date.now() - started);
      if (verdict === false) throw err;
      const ms = verdict === true ? delay : verdict;
      opts.onRetry?.(err, attempt, ms);
      await wait(ms, signal);
    }
  }
}
