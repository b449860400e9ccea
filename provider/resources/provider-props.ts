import type * as pulumi from "@pulumi/pulumi";

/** Resource properties as the dynamic provider passes them: plain JSON values. */
export type Props = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A dynamic provider with every method present, so the shim can delegate each one. */
export type ProviderImpl = Required<
  Pick<pulumi.dynamic.ResourceProvider, "check" | "diff" | "create" | "read" | "update" | "delete">
>;

/** The six methods of a {@link ProviderImpl}. */
const methods = ["check", "diff", "create", "read", "update", "delete"] as const;

/**
 * The provider with every method's call passed through `around` (which runs it and may change its
 * result or error), e.g. to count calls or to rewrite messages.
 */
export function aroundCalls(
  impl: ProviderImpl,
  around: (method: (typeof methods)[number], call: () => Promise<unknown>) => Promise<unknown>,
): ProviderImpl {
  const wrapped: Record<string, unknown> = {};
  for (const method of methods) {
    const call = impl[method] as (...args: unknown[]) => Promise<unknown>;
    wrapped[method] = (...args: unknown[]) => around(method, () => call(...args));
  }
  return wrapped as ProviderImpl;
}

/** Properties without the serialized provider, which the engine adds back to outputs itself. */
export function withoutProvider(props: Props): Props {
  const { __provider: _provider, ...rest } = props;
  return rest;
}

/**
 * The checked inputs of a pool's holder keep of the pool only its ledger settings (its identity is
 * the holder's `poolId`), not its ranges, exclusions and reserved addresses: every later operation
 * works from the allocation record, and every property stored in every holder (twice: inputs and
 * outputs) is serialized again at each checkpoint write of a deployment.
 */
export function withPoolRef(news: Props): Props {
  const { pool, ...rest } = news;
  const ledger = (pool as { ledger?: unknown } | undefined)?.ledger;
  return ledger === undefined ? rest : { ...rest, pool: { ledger } };
}

/**
 * The checked inputs without the program's `holder` input, whose stack and owner are kept as plain
 * values (what every later operation reads), and the pool's queue, which is only needed by `check`.
 */
export function takeHolder(checked: Props): { news: Props; queue: unknown } {
  const { holder, ...news } = checked;
  const h = holder as { stack?: unknown; owner?: unknown; queue?: unknown } | undefined;
  if (h?.stack !== undefined) news.stack = h.stack;
  if (h?.owner !== undefined) news.owner = h.owner;
  return { news, queue: h?.queue };
}
