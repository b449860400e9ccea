import { terminalSafe } from "../core/text";
import type * as pulumi from "@pulumi/pulumi";
import { aroundCalls, type ProviderImpl } from "../resources/provider-props";

/** An error whose message carries a control character, rebuilt with it escaped; others as they are. */
function safeError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const message = terminalSafe(err.message);
  if (message === err.message) return err;
  const safe = new Error(message, { cause: err });
  safe.name = err.name;
  return safe;
}

/**
 * The provider with every message it hands the engine (errors, `check` failures) stripped of
 * control characters: they quote values from state, the cluster and EC2 (names, annotations,
 * tags), and the engine prints them to a terminal and writes them to logs, where an escape
 * sequence or a line break could forge or hide output.
 */
export function terminalSafeProvider(impl: ProviderImpl): ProviderImpl {
  return aroundCalls(impl, async (method, call) => {
    let result: unknown;
    try {
      result = await call();
    } catch (err) {
      throw safeError(err);
    }
    const failures = method === "check" ? (result as pulumi.dynamic.CheckResult).failures : undefined;
    if (!failures?.length) return result;
    return {
      ...(result as object),
      failures: failures.map((f) => ({ ...f, reason: terminalSafe(f.reason) })),
    };
  });
}
