/** How EC2 calls are retried; every delay is in milliseconds. */
export interface RetryPolicy {
  /** Attempts in all (first call included) for throttling and transient server or network errors. */
  attempts: number;
  /** First backoff ceiling; it doubles per attempt (full jitter: the delay is random below it). */
  baseDelayMs: number;
  /** Largest backoff ceiling. */
  maxDelayMs: number;
  /**
   * How long a `*.NotFound` answer is retried when the thing must exist (an instance or interface
   * that was just created): EC2 is eventually consistent for a short while after a create.
   */
  consistencyWindowMs: number;
}

/** Defaults close to the AWS SDK's standard retry mode, with a few seconds for eventual consistency. */
export const defaultRetryPolicy: RetryPolicy = {
  attempts: 8,
  baseDelayMs: 100,
  maxDelayMs: 5_000,
  consistencyWindowMs: 5_000,
};

/** Error codes EC2 uses when a caller is rate limited. */
const throttlingCodes = new Set([
  "RequestLimitExceeded",
  "Throttling",
  "ThrottlingException",
  "TooManyRequestsException",
  "RequestThrottled",
]);

/** Codes that may only mean "not visible yet" right after a create. */
const notYetVisibleCodes = new Set([
  "InvalidInstanceID.NotFound",
  "InvalidNetworkInterfaceID.NotFound",
  "InvalidSubnetID.NotFound",
]);

/** The EC2 error code of an SDK error (`RequestLimitExceeded`, `InvalidInstanceID.NotFound`, …). */
export function ec2ErrorCode(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const e = err as { name?: unknown; Code?: unknown };
  if (typeof e.Code === "string") return e.Code;
  return typeof e.name === "string" ? e.name : undefined;
}

/** What to do with a failed call: retry it (and why), or give up. */
export function classify(err: unknown): "throttled" | "transient" | "not-yet-visible" | "final" {
  const code = ec2ErrorCode(err) ?? "";
  if (throttlingCodes.has(code)) return "throttled";
  if (notYetVisibleCodes.has(code)) return "not-yet-visible";
  const e = err as { $fault?: string; $metadata?: { httpStatusCode?: number }; code?: string; name?: string };
  const status = e?.$metadata?.httpStatusCode;
  if (status === 429) return "throttled";
  if (e?.$fault === "server" || (status !== undefined && status >= 500)) return "transient";
  // Connection resets, refusals and socket timeouts carry no HTTP status.
  if (status === undefined && (/^E[A-Z]+$/.test(String(e?.code)) || e?.name === "TimeoutError")) {
    return "transient";
  }
  return "final";
}

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

/** Options of one {@link withRetry} call. */
export interface RetryOptions {
  policy: RetryPolicy;
  signal?: AbortSignal;
  /** Retry `*.NotFound` for the consistency window (only where the thing is known to exist). */
  awaitVisible?: boolean;
  /** Called before each retry, e.g. to log or count. */
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
}

/**
 * Runs `call`, retrying throttling and transient errors with exponential backoff and full jitter,
 * and `*.NotFound` within the consistency window when `awaitVisible` is set. Client errors are
 * not retried. The abort signal stops both the call and any wait between attempts.
 * @throws the last error, or the signal's reason when it aborts.
 */
export async function withRetry<T>(
  call: (signal?: AbortSignal) => Promise<T>,
  opts: RetryOptions,
): Promise<T> {
  const { policy, signal } = opts;
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted();
    try {
      return await call(signal);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      const kind = classify(err);
      const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
      const delay = Math.round(Math.random() * ceiling);
      const retry =
        kind === "not-yet-visible"
          ? opts.awaitVisible === true && Date.now() - started + delay <= policy.consistencyWindowMs
          : (kind === "throttled" || kind === "transient") && attempt < policy.attempts;
      if (!retry) throw err;
      opts.onRetry?.(err, attempt, delay);
      await sleep(delay, signal);
    }
  }
}
