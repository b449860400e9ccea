// Fault injection: the API server's 429 is produced by a fake client here, because the test
// cluster cannot be made to throttle on demand (it did once, "storage is (re)initializing", right
// after its CRDs were installed; that is what this guards).
import { describe, expect, it } from "vitest";
import { retryingThrottled, type ThrottleRetryPolicy } from "../../provider/kube/throttle-retry";

const throttled = (retryAfter?: string) =>
  Object.assign(new Error("HTTP-Code: 429 Message: storage is (re)initializing"), {
    code: 429,
    body: JSON.stringify({
      kind: "Status",
      reason: "TooManyRequests",
      message: "storage is (re)initializing",
    }),
    headers: retryAfter === undefined ? {} : { "retry-after": retryAfter },
  });
const policy: ThrottleRetryPolicy = { attempts: 4, baseMs: 100, maxMs: 1_500 };

/** A client whose `list` fails with each of `failures` in turn, then answers. */
function fakeClient(failures: unknown[]) {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    name: "fake",
    async list(ns: string) {
      calls++;
      if (calls <= failures.length) throw failures[calls - 1];
      return { items: [ns] };
    },
    describe(x: number) {
      return `sync ${x}`;
    },
  };
}

describe("a Kubernetes client that retries 429 Too Many Requests", () => {
  it.each<[string, unknown[], number[]]>([
    ["retries with a doubling backoff when there is no Retry-After", [throttled(), throttled()], [100, 200]],
    ["waits what Retry-After says", [throttled("1")], [1000]],
    ["never waits longer than maxMs", [throttled("30")], [1500]],
  ])("%s", async (_, failures, waits) => {
    const client = fakeClient(failures);
    const waited: number[] = [];
    const api = retryingThrottled(client, policy, async (ms) => void waited.push(ms));
    expect(await api.list("ns-1")).toEqual({ items: ["ns-1"] });
    expect(waited).toEqual(waits);
    expect(client.calls).toBe(failures.length + 1);
  });

  it("gives up after the policy's attempts and throws the last 429", async () => {
    const client = fakeClient(Array.from({ length: 10 }, () => throttled()));
    const api = retryingThrottled(client, policy, async () => undefined);
    await expect(api.list("ns-1")).rejects.toMatchObject({ code: 429 });
    expect(client.calls).toBe(4);
  });

  it.each([
    ["409 Conflict", Object.assign(new Error("conflict"), { code: 409 })],
    ["a transport error", new Error("connect ECONNREFUSED 127.0.0.1:6443")],
  ])("does not retry %s", async (_, err) => {
    const client = fakeClient([err]);
    const api = retryingThrottled(client, policy, async () => undefined);
    await expect(api.list("ns-1")).rejects.toBe(err);
    expect(client.calls).toBe(1);
  });

  it("passes synchronous methods and properties through", () => {
    const api = retryingThrottled(fakeClient([]), policy);
    expect(api.describe(3)).toBe("sync 3");
    expect(api.name).toBe("fake");
  });
});
