import { AddressSet, freeCount } from "../allocator";
import { stackLedger } from "../state/stack-ledger";
import type { ProviderImpl } from "./index";
import {
  canonicalRanges,
  checkRequestable,
  poolSize,
  resolvePool,
  type Failure,
  type PoolSpec,
  type ResolvedPool,
} from "./pool-spec";
import { errorMessage, withoutProvider, type Props } from "./props";
import { hasUnknown } from "./unknowns";

const specKeys = ["ranges", "cniConfig", "exclude", "reserved", "strategy", "cloudReserved"] as const;
const specOf = (props: Record<string, unknown>): PoolSpec =>
  Object.fromEntries(specKeys.filter((k) => props[k] !== undefined).map((k) => [k, props[k]])) as PoolSpec;
const sameSpec = (a: Record<string, unknown>, b: Record<string, unknown>) =>
  JSON.stringify(specOf(a)) === JSON.stringify(specOf(b));

/**
 * Holders whose addresses the pool would no longer cover (outside every range, a gateway, or
 * excluded). Reserved addresses stay valid for holders that requested them.
 */
async function stranded(props: Record<string, unknown>, pool: ResolvedPool): Promise<string[]> {
  const ledger = stackLedger({ stack: String(props.stack), holder: `IpPool ${props.poolId}` });
  const holders = await ledger.holders(String(props.poolId));
  const out: string[] = [];
  for (const [ip, owner] of holders) {
    const ok = await checkRequestable(pool, ip).then(
      () => true,
      () => false,
    );
    if (!ok) out.push(`${ip} (held by ${owner})`);
  }
  return out.sort();
}

async function holderList(props: Record<string, unknown>): Promise<string[]> {
  const ledger = stackLedger({ stack: String(props.stack), holder: `IpPool ${props.poolId} (delete)` });
  return [...(await ledger.holders(String(props.poolId)))]
    .map(([ip, owner]) => `${ip} (held by ${owner})`)
    .sort();
}

function outputsOf(props: Props, pool: ResolvedPool) {
  return { ...withoutProvider(props), rangeSets: canonicalRanges(pool), size: poolSize(pool) };
}

/**
 * Provider of IpPool: validates everything at `check` (every problem, per property, at preview),
 * updates in place, and refuses changes or deletion that would strand held addresses.
 */
export const ipPoolProvider: ProviderImpl = {
  async check(olds, news) {
    if (hasUnknown(specOf(news))) return { inputs: news };
    const { pool, failures } = resolvePool(specOf(news));
    if (pool && olds.poolId !== undefined && !sameSpec(olds, news)) {
      const lost = await stranded(news, pool).catch((e: unknown) => [
        `(cannot list holders: ${errorMessage(e)})`,
      ]);
      if (lost.length > 0) failures.push(strandFailure(lost));
    }
    // The canonical ranges and size are known now: returning them makes preview show them.
    return { inputs: pool && failures.length === 0 ? outputsOf(news, pool) : news, failures };
  },

  async diff(_id, olds, news) {
    return { changes: !sameSpec(olds, news), replaces: [] };
  },

  async create(inputs) {
    const { pool } = resolvePool(specOf(inputs));
    return { id: String(inputs.poolId).split("::").pop()!, outs: outputsOf(inputs, pool!) };
  },

  async read(id, props) {
    const { pool } = resolvePool(specOf(props));
    if (!pool) return { id, props };
    const ledger = stackLedger({ stack: String(props.stack), holder: `IpPool ${props.poolId} (refresh)` });
    const holders = await ledger.holders(String(props.poolId));
    const taken = new AddressSet(holders.keys());
    const never = [...pool.exclude, ...pool.reserved];
    const free = pool.rangeSets.reduce((sum, set) => sum + freeCount(set, never, taken), 0n);
    const allocations = [...holders]
      .map(([ip, owner]) => ({ ip, owner }))
      .sort((a, b) => (a.ip < b.ip ? -1 : 1));
    return { id, props: { ...outputsOf(props, pool), allocations, free: free.toString() } };
  },

  async update(_id, _olds, news) {
    const { pool, failures } = resolvePool(specOf(news));
    if (!pool) throw new Error(failures.map((f) => `${f.property}: ${f.reason}`).join("; "));
    const lost = await stranded(news, pool);
    if (lost.length > 0) throw new Error(strandFailure(lost).reason);
    return { outs: outputsOf(news, pool) };
  },

  async delete(_id, props) {
    const holders = await holderList(props);
    if (holders.length > 0) {
      throw new Error(
        `pool ${props.poolId} still has allocations: ${holders.join(", ")}; ` +
          `delete or move those resources first (they are released when deleted)`,
      );
    }
  },
};

function strandFailure(lost: string[]): Failure {
  return {
    property: "ranges",
    reason:
      `this change leaves held addresses outside the pool: ${lost.join(", ")}; ` +
      `move or delete those allocations first, or keep their addresses inside the ranges`,
  };
}
