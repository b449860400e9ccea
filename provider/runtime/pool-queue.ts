import type { ProvisionerConfig } from "../provisioners/provisioner-config";
import type { PlanRequest } from "../state/ledger";
import { forget, shared } from "../state/process-registry";
import { checkRequestable, poolChooser, poolSubnets, type ResolvedPool } from "./pool-spec";
import { decodeHolders, type QueuedHolder } from "./pool-queue-codec";
import type { Props } from "./props";
import { provisionerFor } from "./provisioner-cache";

/**
 * Every holder of a pool that the program had created up to and including the one being checked,
 * in program order (the property `poolQueue` of an allocation's inputs). It is only read by `check`
 * and not kept in state.
 */
export interface PoolQueue {
  /** The distinct `observeWith` configs of those holders. */
  observers: ProvisionerConfig[];
  /** The holders, one line each (see pool-queue-codec), the one being checked last. */
  holders: string;
}

/** A queue with its holders decoded. */
export interface DecodedQueue {
  observers: ProvisionerConfig[];
  holders: QueuedHolder[];
}

/**
 * Addresses the provisioner sees in use in the pool's subnets, read once per deployment (provider
 * process): addresses this deployment takes are in the ledger already, and placement re-checks
 * the subnet before it assigns anything.
 */
export function usedAddresses(pool: ResolvedPool, config: Props | undefined): Promise<string[]> {
  if (config === undefined) return Promise.resolve([]);
  const subnets = poolSubnets(pool.rangeSets);
  const key = JSON.stringify([config, subnets]);
  return shared("used-addresses", key, () => {
    const used = provisionerFor(config as ProvisionerConfig).usedAddresses?.(subnets);
    const result = used ? used.then((ips) => ips ?? []) : Promise.resolve([]);
    result.catch(() => forget("used-addresses", key));
    return result;
  });
}

/**
 * The plan requests of the holders before the last one in `queue`, in program order, for
 * {@link Ledger.planAhead}. Holders whose address is not known yet are left out (they do not take
 * from the automatic order; a `reserved` address keeps automatic plans off it), and so are holders
 * whose requested address the pool would refuse (their own check reports it).
 */
export async function holdersAhead(
  pool: ResolvedPool,
  poolId: string,
  queue: DecodedQueue,
): Promise<PlanRequest[]> {
  const count = pool.rangeSets.length;
  const choosers = await Promise.all(
    queue.observers.map(async (config) => poolChooser(pool, await usedAddresses(pool, config))),
  );
  const plain = poolChooser(pool);
  const requests: PlanRequest[] = [];
  for (const holder of queue.holders.slice(0, -1)) {
    if (holder.ip === null) continue;
    const choose = (holder.observer === undefined ? undefined : choosers[holder.observer]) ?? plain;
    if (holder.ip === undefined) {
      requests.push({ pool: poolId, owner: holder.owner, count, choose });
      continue;
    }
    const requested = await checkRequestable(pool, holder.ip).catch(() => undefined);
    if (requested !== undefined)
      requests.push({ pool: poolId, owner: holder.owner, requested: [requested], choose });
  }
  return requests;
}

/**
 * The queue of an allocation's inputs, decoded, when it is one whose last holder is `owner`;
 * undefined otherwise (then the allocation is planned on its own, as by an older program).
 */
export function readQueue(value: unknown, owner: string): DecodedQueue | undefined {
  const q = value as Partial<PoolQueue> | undefined;
  if (typeof q?.holders !== "string" || !Array.isArray(q.observers)) return undefined;
  try {
    const holders = decodeHolders(q.holders, owner);
    return holders.at(-1)?.owner === owner ? { observers: q.observers, holders } : undefined;
  } catch {
    return undefined;
  }
}
