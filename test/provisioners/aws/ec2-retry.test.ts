// withRetry on a fake clock: which EC2 errors are retried, for how long, and how an abort ends it.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { classify, withRetry, type RetryPolicy } from "../../../provider/provisioners/aws/ec2-retry";

const policy: RetryPolicy = { attempts: 4, baseDelayMs: 100, maxDelayMs: 400, consistencyWindowMs: 1_000 };

/** An EC2-shaped SDK error. */
function ec2Error(code: string, status = 400): Error {
  return Object.assign(new Error(`injected ${code}`), {
    name: code,
    $metadata: { httpStatusCode: status },
    $fault: status >= 500 ? "server" : "client",
  });
}

/** A call that fails with `errors` in turn, then returns "ok"; it records the fake time of each attempt. */
function scripted(errors: Error[]) {
  const at: number[] = [];
  const call = () => {
    at.push(Date.now());
    const err = errors.shift();
    return err ? Promise.reject(err) : Promise.resolve("ok");
  };
  return { call, at };
}

/** Runs withRetry to the end on the fake clock. */
async function settle<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  const outcome = promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  await vi.runAllTimersAsync();
  return outcome;
}

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("withRetry", () => {
  it.each([
    ["RequestLimitExceeded", 503, "throttled"],
    ["Throttling", 400, "throttled"],
    ["InternalError", 500, "transient"],
    ["InvalidInstanceID.NotFound", 400, "not-yet-visible"],
    ["InvalidParameterValue", 400, "final"],
    ["UnauthorizedOperation", 403, "final"],
  ] as const)("classifies %s (HTTP %i) as %s", (code, status, kind) => {
    expect(classify(ec2Error(code, status))).toBe(kind);
  });

  it("retries throttling up to the attempt limit, with delays below the doubling ceiling", async () => {
    const { call, at } = scripted(Array.from({ length: 9 }, () => ec2Error("RequestLimitExceeded", 503)));
    const delays: number[] = [];
    const { error } = await settle(
      withRetry(call, { policy, onRetry: (_e, _attempt, delay) => delays.push(delay) }),
    );
    expect((error as Error).name).toBe("RequestLimitExceeded");
    expect(at).toHaveLength(policy.attempts);
    expect(delays).toHaveLength(policy.attempts - 1);
    delays.forEach((d, i) => expect(d).toBeLessThanOrEqual(Math.min(400, 100 * 2 ** i)));
  });

  it("returns the first success after transient failures", async () => {
    const { call, at } = scripted([ec2Error("InternalError", 500), ec2Error("RequestLimitExceeded", 503)]);
    expect(await settle(withRetry(call, { policy }))).toEqual({ value: "ok" });
    expect(at).toHaveLength(3);
  });

  it("never retries a client error", async () => {
    const { call, at } = scripted([ec2Error("InvalidParameterValue")]);
    const { error } = await settle(withRetry(call, { policy }));
    expect((error as Error).name).toBe("InvalidParameterValue");
    expect(at).toHaveLength(1);
  });

  it("retries NotFound only where the thing must exist, and only within the consistency window", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0.5);
    const notFound = () => Array.from({ length: 50 }, () => ec2Error("InvalidInstanceID.NotFound"));

    const once = scripted(notFound());
    expect((await settle(withRetry(once.call, { policy }))).error).toBeDefined();
    expect(once.at).toHaveLength(1);

    const visible = scripted(notFound());
    const { error } = await settle(withRetry(visible.call, { policy, awaitVisible: true }));
    expect((error as Error).name).toBe("InvalidInstanceID.NotFound");
    expect(visible.at.length).toBeGreaterThan(2);
    expect(visible.at.at(-1)).toBeLessThanOrEqual(policy.consistencyWindowMs);
  });

  it("stops waiting between attempts as soon as the signal aborts", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0.99);
    const { call, at } = scripted(Array.from({ length: 9 }, () => ec2Error("RequestLimitExceeded", 503)));
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("stopped")), 50);
    const { error } = await settle(withRetry(call, { policy, signal: controller.signal }));
    expect((error as Error).message).toBe("stopped");
    expect(at).toEqual([0]);
    expect(Date.now()).toBe(50);
  });
});
