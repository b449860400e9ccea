import { describe, expect, it } from "vitest";
import type { ProviderImpl } from "../../provider/resources/provider-props";
import { terminalSafeProvider } from "../../provider/runtime/terminal-safe-provider";

const hostile = "NetNamespace lists 10.0.0.1 (recorded for evil\u001b[2K\rok\nnext line\u2028)";
const escaped = "NetNamespace lists 10.0.0.1 (recorded for evil\\x1b[2K\\x0dok\\x0anext line\\u2028)";

const throwing = (message: string) => async () => {
  throw new Error(message);
};
const impl: ProviderImpl = {
  check: async () => ({ inputs: {}, failures: [{ property: "ip", reason: hostile }] }),
  diff: throwing(hostile),
  create: throwing(hostile),
  read: throwing(hostile),
  update: throwing(hostile),
  delete: throwing("plain message"),
};

describe("the providers' messages reach the engine without control characters", () => {
  const safe = terminalSafeProvider(impl);

  it.each(["diff", "create", "read", "update"] as const)(
    "%s: an error's message is escaped",
    async (method) => {
      const call = (safe[method] as (...a: unknown[]) => Promise<unknown>)("id", {}, {});
      await expect(call).rejects.toThrow(escaped);
      await call.catch((e: Error) => expect((e.cause as Error).message).toBe(hostile));
    },
  );

  it("check: every failure's reason is escaped", async () => {
    expect((await safe.check({}, {})).failures).toEqual([{ property: "ip", reason: escaped }]);
  });

  it("an error without control characters is passed on as it is", async () => {
    const err = await safe.delete("id", {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe("plain message");
    expect((err as Error).cause).toBeUndefined();
  });
});
