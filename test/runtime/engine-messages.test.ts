import { describe, expect, it } from "vitest";
import { IpamError } from "../../provider/core/ipam-error";
import type { ProviderImpl } from "../../provider/resources/provider-props";
import { engineMessages } from "../../provider/runtime/engine-messages";

const hostile = "NetNamespace lists 10.0.0.1 (recorded for evil\u001b[2K\rok\nnext line\u2028)";
const escaped = "NetNamespace lists 10.0.0.1 (recorded for evil\\x1b[2K\\x0dok\\x0anext line\\u2028)";

const throwing = (err: unknown) => async () => {
  throw err;
};
const impl = (err: unknown, failures?: { property: string; reason: string }[]): ProviderImpl => ({
  check: async () => ({ inputs: {}, ...(failures && { failures }) }),
  diff: throwing(err),
  create: throwing(err),
  read: throwing(err),
  update: throwing(err),
  delete: throwing(err),
});
const methods = ["diff", "create", "read", "update", "delete"] as const;
const call = (p: ProviderImpl, method: (typeof methods)[number]) =>
  (p[method] as (...a: unknown[]) => Promise<unknown>)("id", {}, {}).then(
    () => {
      throw new Error(`${method} did not throw`);
    },
    (e: unknown) => e as Error,
  );

describe("every error a provider throws reaches the engine as `[CODE] message`, without control characters", () => {
  it.each([
    // thrown, message the engine gets, name
    [
      new IpamError("IP_UNAVAILABLE", "requested IP 10.0.8.1 is a gateway"),
      "[IP_UNAVAILABLE] requested IP 10.0.8.1 is a gateway",
      "IpamError",
    ],
    [new IpamError("TAKEN_OVER", hostile), `[TAKEN_OVER] ${escaped}`, "IpamError"],
    [
      new Error("Cannot read properties of undefined"),
      "[UNEXPECTED] Cannot read properties of undefined",
      "Error",
    ],
    [new TypeError(hostile), `[UNEXPECTED] ${escaped}`, "TypeError"],
    ["a thrown string", "[UNEXPECTED] a thrown string", "IpamError"],
    // A provisioner call given up on (callSignal): the platform did not answer in time.
    [
      new DOMException("The operation was aborted due to timeout", "TimeoutError"),
      "[PROVISIONER_FAILED] The operation was aborted due to timeout",
      "TimeoutError",
    ],
    // A failure turned into an error on its way out keeps the code it has.
    [
      new IpamError("POOL_IN_USE", "[POOL_IN_USE] pool p still has allocations"),
      "[POOL_IN_USE] pool p still has allocations",
      "IpamError",
    ],
  ])("%s", async (thrown, message, name) => {
    const p = engineMessages(impl(thrown));
    for (const method of methods) {
      const err = await call(p, method);
      expect(err.message).toBe(message);
      expect(err.name).toBe(name);
      if (thrown instanceof Error && thrown.message !== message) {
        expect(err.cause).toBe(thrown);
        // The dynamic-provider host logs the stack: the original one, under the coded header.
        expect(err.stack?.split("\n")[0]).toBe(`${name}: ${message}`);
        expect(err.stack).toContain(thrown.stack?.split("\n").find((l) => l.includes(" at ")));
      }
    }
  });

  it("an IpamError keeps its code for callers that branch on it", async () => {
    const err = await call(engineMessages(impl(new IpamError("DRIFT", "egress IP 10.0.0.1 moved"))), "read");
    expect(err).toBeInstanceOf(IpamError);
    expect((err as IpamError).code).toBe("DRIFT");
  });
});

describe("every check failure reaches the engine with its code, without control characters", () => {
  it.each([
    [
      "with a code",
      { property: "ip", reason: "10.0.8.1 is a gateway", code: "IP_UNAVAILABLE" },
      "[IP_UNAVAILABLE] 10.0.8.1 is a gateway",
    ],
    [
      "without a code (an input problem)",
      { property: "ip", reason: "must be a string" },
      "[INVALID_INPUT] must be a string",
    ],
    [
      "with control characters",
      { property: "ip", reason: hostile, code: "ADDRESS_IN_USE" },
      `[ADDRESS_IN_USE] ${escaped}`,
    ],
    [
      "already coded",
      { property: "ip", reason: "[NOT_IN_RANGE] x", code: "NOT_IN_RANGE" },
      "[NOT_IN_RANGE] x",
    ],
  ])("%s", async (_, failure, reason) => {
    const { failures } = await engineMessages(impl(undefined, [failure])).check({}, {});
    expect(failures).toEqual([{ code: "INVALID_INPUT", ...failure, reason }]);
  });

  it("a check without failures is passed on as it is", async () => {
    const result = { inputs: { a: 1 } };
    expect(await engineMessages({ ...impl(undefined), check: async () => result }).check({}, {})).toBe(
      result,
    );
  });
});
