import { IpamError } from "../../core/ipam-error";
import type { ProvisionerConfig } from "../../provisioners/config/provisioner-config";
import type { PlanRequest } from "../../ledger/ledger";
import { forget, shared } from "../../core/process-registry";
import { checkRequestable, poolChooser, poolOfFamily, poolSubnets, type ResolvedPool } from "./pool-spec";
import { decodeHolders, type QueuedHolder } from "./pool-queue-codec";
import { isQueueFileRef, readQueueFile, type QueueFileRef } from "./pool-queue-file";
import { errorMessage } from "../../core/failure";
import type { Props } from "../provider-props";
import { provisionerFor } from "../../provisioners/factory/provisioner-cache";
import { hasUnknown } from "../../core/unknowns";
import { adoptedAddress } from "./adopted-address";
import { queuedBlockRequest } from "./pool-blocks";

/** The name part of a pool's URN, for messages. */
export const poolName = (id: string): string => id.split("::").at(-1) ?? id;

/**
 * Every holder of a pool that the program had created up to and including the one being checked,
 * in program order (the `queue` of an allocation's input `holder`), in one of two forms: the lines
 * themselves (`holders`), or where the program wrote them (`file`, see pool-queue-file). It is
 * only read by `check` and not kept in state.
 */
export type PoolQueue = { observers: ProvisionerConfig[] } & ({ holders: string } | QueueFileRef);

/** A queue with its holders decoded. */
export interface DecodedQueue {
  observers: ProvisionerConfig[];
  /**
   * The holders not yet planned in this process, in program order, the one being checked last (in
   * the inline form, every holder).
   */
  holders: QueuedHolder[];
  /** Records that every holder up to and including the one being checked is planned in this process. */
  planned(): void;
}

/**
 * Addresses the provisioner sees in use in the pool's subnets, read once per deployment (provider
 * process): addresses this deployment takes are in the ledger already, and placement re-checks
 * the subnet before it assigns anything.
 */
export function usedAddresses(pool: ResolvedPool, config: Props | null | undefined): Promise<string[]> {
  if (config === undefined || config === null) return Promise.resolve([]);
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
 * {@link Ledger.planAhead}. Left out, because their own check does not plan them either or
 * reports why: holders whose address is not known to the others (they do not take from the
 * automatic order; a `reserved` address keeps automatic plans off it), holders whose requested
 * address the pool would refuse, and holders whose observer is not known yet (preview) or fails.
 */
export async function holdersAhead(
  pool: ResolvedPool,
  poolId: string,
  queue: DecodedQueue,
): Promise<PlanRequest[]> {
  const wanted = new Set(
    queue.holders.slice(0, -1).flatMap((h) => (h.observer === undefined ? [] : [h.observer])),
  );
  // What each observer sees in use (undefined: not known yet, at preview).
  const seen = new Map<number, readonly string[] | undefined>();
  for (const index of wanted) {
    const config = queue.observers[index];
    seen.set(
      index,
      hasUnknown(config) ? undefined : await usedAddresses(pool, config).catch(() => undefined),
    );
  }
  const requests: PlanRequest[] = [];
  for (const holder of queue.holders.slice(0, -1)) {
    // A holder of one family plans from that family's range set (none: its own check refuses it).
    const holderPool = poolOfFamily(pool, holder.family);
    if (!holderPool) continue;
    const count = holderPool.rangeSets.length;
    const plain = poolChooser(holderPool);
    const inUse = holder.observer === undefined ? [] : seen.get(holder.observer);
    const observed = inUse && poolChooser(holderPool, inUse);
    const family = holder.family ? { family: holder.family } : {};
    if (holder.ip === null) continue;
    // A requested address is known whatever its observer (whose view only keeps automatic plans off addresses).
    const choose = holder.ip !== undefined && !holder.adopt ? (observed ?? plain) : observed;
    if (choose === undefined) continue;
    if (holder.adopt && holder.observer !== undefined) {
      // The address its namespace has, as its own check finds it (one read per process); none: automatic.
      const config = queue.observers[holder.observer] as ProvisionerConfig;
      const found: { ip?: string } | undefined = await adoptedAddress(
        holderPool,
        poolName(poolId),
        config,
        holder.adopt,
        holder.family,
      )
        .then((a) => (a ? checkRequestable(holderPool, a.ip) : undefined))
        .then(
          (ip) => ({ ip }),
          () => undefined,
        );
      // Left out when the namespace's addresses do not fit: its own check says why.
      if (found?.ip) requests.push({ pool: poolId, owner: holder.owner, requested: [found.ip], choose });
      else if (found) requests.push({ pool: poolId, owner: holder.owner, count, choose, ...family });
      continue;
    }
    if (holder.ip?.includes("/")) {
      const block = queuedBlockRequest(pool, poolId, holder.owner, holder.ip);
      if (block) requests.push(block);
      continue;
    }
    if (holder.ip === undefined) {
      requests.push({ pool: poolId, owner: holder.owner, count, choose, ...family });
      continue;
    }
    const requested = await checkRequestable(holderPool, holder.ip).catch(() => undefined);
    if (requested !== undefined)
      requests.push({ pool: poolId, owner: holder.owner, requested: [requested], choose });
  }
  return requests;
}

/**
 * The holders before the last one in `queue` that take from the automatic order with a provisioner
 * config not known yet (at preview: a config made from another resource's outputs). Until they
 * hold their addresses, what the last one would get automatically depends on plans that only `up`
 * can make.
 */
export function unknownAhead(queue: DecodedQueue): string[] {
  return queue.holders
    .slice(0, -1)
    .filter((h) => unsettled(h, queue.observers))
    .map((h) => h.owner);
}

/** Whether a holder takes from the automatic order with an observer not known yet (see {@link unknownAhead}). */
function unsettled(h: QueuedHolder, observers: readonly ProvisionerConfig[]): boolean {
  return (
    h.observer !== undefined &&
    hasUnknown(observers[h.observer]) &&
    (h.ip === undefined || (h.ip !== null && h.adopt !== undefined))
  );
}

/**
 * The queue of an allocation's inputs, decoded, when it is one whose last holder is `owner`;
 * undefined otherwise (then the allocation is planned on its own, as by an older program).
 * @throws IpamError INVALID_STATE naming the file when the queue's file cannot be read as the input says.
 */
export function readQueue(value: unknown, owner: string): DecodedQueue | undefined {
  const q = value as Partial<PoolQueue> | undefined;
  if (!Array.isArray(q?.observers)) return undefined;
  const observers = q.observers as ProvisionerConfig[];
  if (isQueueFileRef(q)) {
    let read;
    try {
      read = readQueueFile(q, owner);
    } catch (e) {
      throw new IpamError(
        "INVALID_STATE",
        `the pool's holder queue ${q.file}, written by the program, ${errorMessage(e)}: the program and the ` +
          `provider must run on one machine as one user; to send the queue inline in every holder's inputs ` +
          `instead, set EGRESS_IPAM_POOL_QUEUE=inline where the program runs`,
      );
    }
    const last = read.holders[q.lines - 1]!;
    if (last.owner !== owner) {
      throw new IpamError(
        "INVALID_STATE",
        `the pool's holder queue ${q.file} names ${last.owner} at line ${q.lines} where ${owner} was written: ` +
          `the file was changed after the program wrote it`,
      );
    }
    const from = Math.min(read.planned, q.lines - 1);
    // Planned up to this holder, but not past one whose plan waits for an observer preview cannot
    // know: every later check must still see it ahead (and be shown unknown while it holds nothing).
    const waiting = read.holders.findIndex((h, i) => i >= from && i < q.lines - 1 && unsettled(h, observers));
    return {
      observers,
      holders: read.holders.slice(from, q.lines),
      planned: () => void (read.planned = Math.max(read.planned, waiting < 0 ? q.lines : waiting)),
    };
  }
  if (typeof (q as { holders?: unknown }).holders !== "string") return undefined;
  try {
    const holders = decodeHolders((q as { holders: string }).holders, owner);
    return holders.at(-1)?.owner === owner ? { observers, holders, planned: () => undefined } : undefined;
  } catch {
    return undefined;
  }
}
