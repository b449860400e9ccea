import { terminalSafe } from "../core/text";
import type { ProviderImpl } from "../resources/provider-props";

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
  const guard =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await call(...args);
      } catch (err) {
        throw safeError(err);
      }
    };
  return {
    check: async (olds, news) => {
      const result = await guard(impl.check)(olds, news);
      if (!result.failures?.length) return result;
      const failures = result.failures.map((f) => ({ ...f, reason: terminalSafe(f.reason) }));
      return { ...result, failures };
    },
    diff: guard(impl.diff),
    create: guard(impl.create),
    read: guard(impl.read),
    update: guard(impl.update),
    delete: guard(impl.delete),
  };
}
