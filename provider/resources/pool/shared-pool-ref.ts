// A tenant's reference to a shared pool (`IpPool.shared`): the definition its owner stored is read
// from the ledger at every `check`, by the reference itself (for its outputs) and by each holder
// (to plan), so the owner changes the pool without the tenant's program changing.
import { AddressSet, freeCount } from "../../allocator";
import { inputFailure, failureOf, type Failure } from "../../core/failure";
import { ClaimStore, isLive, ofStack, type StackRef } from "../../ledger/kubernetes/claim-store";
import { ownerOf, PoolDefinitions, type StoredDefinition } from "../../ledger/kubernetes/pool-definition";
import { takeEntry } from "../../ledger/held-entry";
import { entryCost, quotaGroupOf } from "../../ledger/quota-rules";
import { kubeClients } from "../../kube/kube-config";
import { poolOfDefinition } from "./canonical-definition";
import { resolveLedger } from "./ledger-option";
import { canonicalRanges, poolSize, resolvePool, type ResolvedPool } from "./pool-spec";

/** A shared pool as a tenant sees it: its stored definition, resolved. */
export interface SharedPool {
  stored: StoredDefinition;
  pool: ResolvedPool;
}

/**
 * Reads the shared pool a reference names.
 * @param at - the property failures are reported under (`ledger` for the reference, `pool` for a holder).
 */
export async function readSharedPool(
  ledger: unknown,
  at: string,
): Promise<{ shared?: SharedPool; failures: Failure[] }> {
  const { config, failures } = resolveLedger(ledger, at === "ledger" ? "" : `${at}.`);
  if (!config)
    return {
      failures:
        failures.length > 0 ? failures : [inputFailure(at, "a shared pool reference needs its ledger")],
    };
  let stored: StoredDefinition | undefined;
  try {
    stored = await new PoolDefinitions(config).read();
  } catch (e) {
    return { failures: [failureOf(at, e, "LEDGER_UNAVAILABLE")] };
  }
  if (!stored) {
    const reason =
      `no shared pool "${config.name}" in namespace "${config.namespace}": nothing defines it there yet. ` +
      `The stack that owns it creates it (new IpPool with its ranges and this ledger) and runs pulumi up first; ` +
      `check the ledger's name, namespace and context`;
    return { failures: [inputFailure(at, reason, "NOT_FOUND")] };
  }
  try {
    return { shared: { stored, pool: poolOfDefinition(stored.definition) }, failures: [] };
  } catch (e) {
    return { failures: [failureOf(at, e, "INVALID_STATE")] };
  }
}

/**
 * The pool a holder's `pool` input describes: resolved from its spec, or (a reference) from the
 * definition stored in its ledger (with `ownedBy`, the stack that owns it, and that `definition` as
 * stored, which the holds planned from it record). Failures are under `pool.`.
 */
export async function resolvePoolRef(
  ref: Record<string, unknown>,
): Promise<{ pool?: ResolvedPool; failures: Failure[]; ownedBy?: string; definition?: string }> {
  if (ref.shared !== true) return resolvePool(ref, "pool.");
  const { shared, failures } = await readSharedPool(ref.ledger, "pool");
  if (!shared) return { failures };
  const { definition } = shared.stored;
  return { pool: shared.pool, failures, ownedBy: ownerOf(shared.stored), definition };
}

/** What a reference records of its pool: what its owner decides, so it changes only when the owner acts. */
export interface ReferenceFigures {
  rangeSets: ReturnType<typeof canonicalRanges>;
  size: string;
  definition: string;
  ownedBy: string;
}

/** The pool a reference names, as its state records it. */
export function referenceFigures(shared: SharedPool): ReferenceFigures {
  return {
    rangeSets: canonicalRanges(shared.pool),
    size: poolSize(shared.pool),
    definition: shared.stored.definition,
    ownedBy: ownerOf(shared.stored),
  };
}

/** What is left of a shared pool, and what one stack uses of it. */
export interface PoolUsage {
  /** Free addresses: every live hold and claim taken. */
  free: string;
  /** What the stack holds (a block counting its addresses). */
  used: string;
  /** The limit of the stack's quota group, when one applies. */
  quota?: string;
}

/**
 * The usage of a shared pool for stack `me`, as of now: every live hold and claim is taken, and
 * `used` counts `me`'s (its holds are what its runs planned: a preview's, which its `up` claims).
 */
export async function poolUsage(
  ledger: unknown,
  shared: SharedPool,
  me: StackRef | undefined,
): Promise<PoolUsage> {
  const { config } = resolveLedger(ledger);
  const claims = await new ClaimStore(kubeClients(config!), config!.namespace, config!.name).list();
  const at = Date.now();
  const taken = new AddressSet();
  let used = 0n;
  for (const c of claims) {
    if (!isLive(c, at)) continue;
    takeEntry(taken, c.ip);
    if (c.nodeId === undefined && me !== undefined && ofStack(c, me)) used += entryCost(c.ip);
  }
  const { pool, stored } = shared;
  const never = [...pool.exclude, ...pool.reserved];
  const free = pool.rangeSets.reduce((sum, set) => sum + freeCount(set, never, taken), 0n);
  const group = me && quotaGroupOf(stored.quotas, me.stack, me.stackId);
  return { free: free.toString(), used: used.toString(), ...(group ? { quota: String(group.limit) } : {}) };
}
