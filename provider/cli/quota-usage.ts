// What each stack uses of a shared pool, against the quotas its owner set: the figures of
// `report --ledger`. Counted as the ledger enforces quotas (quota-rules.ts): every live entry of a
// stack costs its addresses (a block all of its own), node addresses cost nothing.
import { isLive, type Claim } from "../ledger/kubernetes/claim-store";
import type { StoredDefinition } from "../ledger/kubernetes/pool-definition";
import { entryCost, quotaGroupOf } from "../ledger/quota-rules";

/** The stack that owns a shared pool, as its definition object records it. */
export interface PoolOwner {
  /** `<org>/<project>/<stack>`. */
  stack: string;
  /** Its identity; absent in a definition an earlier version wrote. */
  stackId?: string;
  /** URN of the IpPool that defines the pool. */
  pool: string;
}

/** The quota a stack counts against, and what its group uses of it. Counts are decimal strings. */
export interface StackQuota {
  /** The owner's stack name pattern the stack counts under (its stacks together); absent for the default quota. */
  pattern?: string;
  /** The group's limit, in addresses. */
  limit: string;
  /** What the group holds and plans: the stack's own under the default, every matching stack's under a pattern. */
  used: string;
}

/** One stack's entries in a shared pool. Counts are decimal strings (IPv6 blocks exceed 2^53). */
export interface StackUsage {
  /** `<org>/<project>/<stack>`, as its claims name it. */
  stack: string;
  /** Its identity; absent for claims of earlier versions, which only name the stack. */
  stackId?: string;
  /** Set on the stack that owns the pool. */
  owner?: true;
  /** Addresses of its claims (created resources). */
  held: string;
  /** Addresses of its holds that have not lapsed (planned, not created). */
  planned: string;
  /** Its quota; absent when none applies to it. */
  quota?: StackQuota;
}

interface Tally {
  stack: string;
  stackId?: string;
  owner?: true;
  held: bigint;
  planned: bigint;
}

/** The owner of the pool `stored` defines. */
export const poolOwner = (stored: StoredDefinition): PoolOwner => ({
  stack: stored.stack,
  ...(stored.ownerStackId !== undefined ? { stackId: stored.ownerStackId } : {}),
  pool: stored.owner,
});

/**
 * Every stack with live entries in the pool (and its owner, even with none), by name then identity,
 * with what it holds and plans and its quota under `stored.quotas`. Stacks are told apart by
 * identity; the claims of an earlier version (a name only) count for the one identity of that name
 * when there is exactly one, as the ledger counts them for it. Node addresses and objects that are
 * no valid claim belong to no stack here.
 */
export function usageByStack(stored: StoredDefinition, claims: readonly Claim[], now: number): StackUsage[] {
  const tallies = new Map<string, Tally>();
  const tallyOf = (stack: string, stackId?: string) => {
    const key = stackId ?? `name ${stack}`;
    let t = tallies.get(key);
    if (!t)
      tallies.set(key, (t = { stack, ...(stackId !== undefined ? { stackId } : {}), held: 0n, planned: 0n }));
    return t;
  };
  for (const c of claims) {
    if (!isLive(c, now) || c.nodeId !== undefined || c.malformed !== undefined) continue;
    const t = tallyOf(c.stack, c.stackId);
    if (c.state === "claim") t.held += entryCost(c.ip);
    else t.planned += entryCost(c.ip);
  }
  for (const [key, t] of tallies) {
    if (t.stackId !== undefined) continue;
    const same = [...tallies.values()].filter((o) => o.stack === t.stack && o.stackId !== undefined);
    if (same.length !== 1) continue;
    same[0]!.held += t.held;
    same[0]!.planned += t.planned;
    tallies.delete(key);
  }
  const owner = poolOwner(stored);
  const owners = [...tallies.values()].filter((t) =>
    owner.stackId !== undefined ? t.stackId === owner.stackId : t.stack === owner.stack,
  );
  for (const t of owners.length > 0 ? owners : [tallyOf(owner.stack, owner.stackId)]) t.owner = true;

  const rows = [...tallies.values()].sort(
    (a, b) => cmp(a.stack, b.stack) || cmp(a.stackId ?? "", b.stackId ?? ""),
  );
  const groups = rows.map((t) => quotaGroupOf(stored.quotas, t.stack, t.stackId));
  const used = new Map<string, bigint>();
  rows.forEach((t, i) => {
    const g = groups[i];
    if (g) used.set(g.key, (used.get(g.key) ?? 0n) + t.held + t.planned);
  });
  return rows.map((t, i) => {
    const g = groups[i];
    const quota: StackQuota | undefined = g && {
      ...(g.key.startsWith("stacks ") ? { pattern: g.key.slice("stacks ".length) } : {}),
      limit: String(g.limit),
      used: used.get(g.key)!.toString(),
    };
    return {
      stack: t.stack,
      ...(t.stackId !== undefined ? { stackId: t.stackId } : {}),
      ...(t.owner ? { owner: true as const } : {}),
      held: t.held.toString(),
      planned: t.planned.toString(),
      ...(quota ? { quota } : {}),
    };
  });
}

/** Code-point order: the same in every locale. */
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
