/**
 * Process-wide state of the dynamic provider.
 *
 * The engine deserializes provider code separately for each resource, and more than one copy of
 * this package may be loaded in one process, so everything that must be shared — locks, taken
 * sets, checkpoint reads, provisioner clients — hangs off one well-known global symbol.
 */
const key = Symbol.for("pulumi-egress-ipam");

type Registry = Map<string, unknown>;

function registry(): Registry {
  const g = globalThis as unknown as Record<symbol, Registry | undefined>;
  return (g[key] ??= new Map());
}

/**
 * The process-wide value for `namespace` and `id`, created by `create` on first use. Namespaces
 * keep kinds of values apart (`lock`, `pool-book`, `stack-export`, `provisioner`).
 */
export function shared<T>(namespace: string, id: string, create: () => T): T {
  const r = registry();
  const k = `${namespace}\u0000${id}`;
  if (!r.has(k)) r.set(k, create());
  return r.get(k) as T;
}

/** Drops a shared value, so the next {@link shared} call creates it again. */
export function forget(namespace: string, id: string): void {
  registry().delete(`${namespace}\u0000${id}`);
}
