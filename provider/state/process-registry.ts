/**
 * Process-wide state of the dynamic provider.
 *
 * The engine deserializes provider code separately for each resource (each serialized provider
 * text is loaded once), and module instances may differ between package versions in one process,
 * so anything that must be shared — locks, taken sets — hangs off one well-known global symbol.
 */
const key = Symbol.for("pulumi-egress-ipam");

/** Shared maps, created on first use. Values are owned by the modules that store them. */
export interface ProcessRegistry {
  /** Per-scope lock state, keyed by lock id. */
  locks: Map<string, unknown>;
  /** Per-pool ledger state (taken sets, tentative plans), keyed by ledger scope. */
  ledgers: Map<string, unknown>;
}

/** Returns this process's registry, creating it on first use. */
export function processRegistry(): ProcessRegistry {
  const g = globalThis as unknown as Record<symbol, ProcessRegistry | undefined>;
  return (g[key] ??= { locks: new Map(), ledgers: new Map() });
}
