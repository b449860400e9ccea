import { IpamError } from "../../core/ipam-error";
import { canonicalRanges, resolvePool, type PoolSpec, type ResolvedPool } from "./pool-spec";

/**
 * The canonical definition of a pool, as shared pools store and compare it: JSON of its range sets
 * (canonical, with every range's start, end and gateway), sorted exclusions (cloud-reserved
 * addresses included) and reserved addresses, its strategy, and its node network when it has one.
 * Two pools hand out the same addresses exactly when their definitions are equal.
 */
export function poolDefinition(pool: ResolvedPool): string {
  const sorted = (xs: string[]) => [...xs].sort();
  return JSON.stringify({
    ranges: canonicalRanges(pool),
    exclude: sorted(pool.exclude),
    reserved: sorted(pool.reserved),
    strategy: pool.strategy,
    ...(pool.node ? { node: pool.node } : {}),
    // Only a pool with a rule has it in its definition: those stored before rules existed stay equal.
    ...(pool.prefixLengths ? { prefixLengths: pool.prefixLengths } : {}),
  });
}

/**
 * The pool a stored definition describes (the inverse of {@link poolDefinition}), for readers of a
 * shared pool's ledger that have no stack of their own.
 * @throws IpamError INVALID_STATE naming the problems when `text` is not a definition this package wrote.
 */
export function poolOfDefinition(text: string): ResolvedPool {
  let d: {
    ranges?: unknown;
    exclude?: string[];
    reserved?: string[];
    strategy?: string;
    node?: unknown;
    prefixLengths?: PoolSpec["prefixLengths"];
  };
  try {
    d = JSON.parse(text) as typeof d;
  } catch {
    throw new IpamError(
      "INVALID_STATE",
      `${JSON.stringify(text.slice(0, 80))} is not a pool definition (not JSON)`,
    );
  }
  const node = d.node as { network?: string; static?: Record<string, string> } | undefined;
  const spec: PoolSpec = node
    ? { network: node.network, static: node.static }
    : // Each stored range set is one family of the pool: CNI host-local's `ranges` holds exactly that.
      { cniConfig: JSON.stringify({ cniVersion: "1.0.0", ipam: { type: "host-local", ranges: d.ranges } }) };
  const { pool, failures } = resolvePool({
    ...spec,
    exclude: d.exclude,
    reserved: d.reserved,
    strategy: d.strategy as PoolSpec["strategy"],
    ...(d.prefixLengths ? { prefixLengths: d.prefixLengths } : {}),
  });
  if (!pool) {
    const why = failures.map((f) => `${f.property}: ${f.reason}`).join("; ");
    throw new IpamError("INVALID_STATE", `the stored pool definition is not valid (${why})`);
  }
  return pool;
}
