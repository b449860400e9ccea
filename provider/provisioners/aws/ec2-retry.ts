import { retrying } from "../../core/retry";

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
export function withRetry<T>(call: (signal?: AbortSignal) => Promise<T>, opts: RetryOptions): Promise<T> {
  const { policy } = opts;
  return retrying((_attempt, signal) => call(signal), {
    baseMs: policy.baseDelayMs,
    maxMs: policy.maxDelayMs,
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.onRetry ? { onRetry: opts.onRetry } : {}),
    retryable: (err, attempt, delay, elapsed) => {
      const kind = classify(err);
      if (kind === "not-yet-visible") {
        return opts.awaitVisible === true && elapsed + delay <= policy.consistencyWindowMs;
      }
      return (kind === "throttled" || kind === "transient") && attempt < policy.attempts;
    },
  });
}
