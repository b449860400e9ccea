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
 * definition stored in its ledger. Failures are under `pool.`.
 */
export async function resolvePoolRef(
  ref: Record<string, unknown>,
): Promise<{ pool?: ResolvedPool; failures: Failure[] }> {
  if (ref.shared !== true) return resolvePool(ref, "pool.");
  const { shared, failures } = await readSharedPool(ref.ledger, "pool");
  return shared ? { pool: shared.pool, failures } : { failures };
}

/** What a reference shows of its pool: known at preview, read again at each check and refresh. */
export interface ReferenceFigures {
  rangeSets: ReturnType<typeof canonicalRanges>;
  size: string;
  free: string;
  used: string;
  quota?: string;
  definition: string;
  ownedBy: string;
}

/**
 * The figures of a shared pool for stack `me`: its size and free addresses (every other stack's
 * holds and every claim taken), what `me` has claimed, and the quota of its group.
 */
export async function referenceFigures(
  ledger: unknown,
  shared: SharedPool,
  me: StackRef,
): Promise<ReferenceFigures> {
  const { config } = resolveLedger(ledger);
  const claims = await new ClaimStore(kubeClients(config!), config!.namespace, config!.name).list();
  const at = Date.now();
  const taken = new AddressSet();
  let used = 0n;
  for (const c of claims) {
    // This stack's holds are the plans of its runs (a preview's, which its `up` claims): left out, so
    // that preview and `up` show the same figures, which count them once they are claims.
    if (!isLive(c, at) || (c.state === "hold" && ofStack(c, me))) continue;
    takeEntry(taken, c.ip);
    if (c.nodeId === undefined && ofStack(c, me)) used += entryCost(c.ip);
  }
  const { pool, stored } = shared;
  const never = [...pool.exclude, ...pool.reserved];
  const free = pool.rangeSets.reduce((sum, set) => sum + freeCount(set, never, taken), 0n);
  const group = quotaGroupOf(stored.quotas, me.stack, me.stackId);
  return {
    rangeSets: canonicalRanges(pool),
    size: poolSize(pool),
    free: free.toString(),
    used: used.toString(),
    ...(group ? { quota: String(group.limit) } : {}),
    definition: stored.definition,
    ownedBy: ownerOf(stored),
  };
}
