import { errorMessage, failureOf, inputFailure, type Failure } from "../../core/failure";
import { AddressSet, freeCount, IpamError, prefixContains } from "../../allocator";
import { PoolDefinitions } from "../../ledger/kubernetes/pool-definition";
import { poolDefinition } from "../pool/canonical-definition";
import { assertSameCluster, ledgerFor, ledgerKey, pinCluster, resolveLedger } from "../pool/ledger-option";
import {
  canonicalRanges,
  checkRequestable,
  poolSize,
  poolSpecOf,
  resolvePool,
  type ResolvedPool,
} from "../pool/pool-spec";
import { withoutProvider, type Props, type ProviderImpl } from "../provider-props";
import { hasUnknown } from "../../core/unknowns";
import { stackIdentity } from "../../ledger/stack/stack-identity";
import { isStackMissing } from "../../ledger/stack/stack-checkpoint";
import { warnOnce } from "../../core/warnings";
import { shapeFailures } from "../input-shape";
import { ipPoolInputs } from "../resource-inputs";
import { isBlock, takeEntry } from "../../ledger/held-entry";
import { checkRequestableBlock } from "../pool/pool-blocks";

/** Whether a held block is still inside the pool's subnets and clear of its exclusions. */
function blockStays(pool: ResolvedPool, cidr: string): boolean {
  try {
    checkRequestableBlock(pool, cidr);
    return true;
  } catch {
    return false;
  }
}

const sameSpec = (a: Record<string, unknown>, b: Record<string, unknown>) =>
  JSON.stringify(poolSpecOf(a)) === JSON.stringify(poolSpecOf(b));

/**
 * Holders whose addresses the pool would no longer cover (outside every range, a gateway, or
 * excluded). Reserved addresses stay valid for holders that requested them.
 */
async function stranded(props: Record<string, unknown>, pool: ResolvedPool): Promise<string[]> {
  const ledger = ledgerFor(props, props.ledger, `IpPool ${props.poolId}`);
  const holders = await ledger.holders(String(props.poolId));
  const out: string[] = [];
  for (const [ip, owner] of holders) {
    // A node network's addresses are its host prefixes; a ranged pool's, what it could hand out.
    const node = pool.node;
    const ok = node
      ? prefixContains(node.network, ip)
      : isBlock(ip)
        ? blockStays(pool, ip)
        : await checkRequestable(pool, ip).then(
            () => true,
            () => false,
          );
    if (!ok) out.push(`${ip} (held by ${owner})`);
  }
  return out.sort();
}

async function holderList(props: Record<string, unknown>): Promise<string[]> {
  const ledger = ledgerFor(props, props.ledger, `IpPool ${props.poolId} (delete)`);
  // A shared pool outlives this stack's IpPool: only this stack's own claims keep it.
  const own = (owner: string) => owner.startsWith("urn:") && !owner.includes(" of stack ");
  let holders: ReadonlyMap<string, string>;
  try {
    holders = await ledger.holders(String(props.poolId));
  } catch (e) {
    if (!isStackMissing(e)) throw e;
    // Renamed since: the checkpoint cannot be found by the name this pool recorded. Its holders are
    // resources of the stack that depend on it, so the engine has deleted them before it.
    warnOnce(`pool ${String(props.poolId)}: ${errorMessage(e)}; deleting it without listing its holders`);
    return [];
  }
  return [...holders]
    .filter(([, owner]) => own(owner))
    .map(([ip, owner]) => `${ip} (held by ${owner})`)
    .sort();
}

/**
 * For a shared pool: makes the stored definition agree with this pool's (writing it when the pool
 * is new to the ledger; replacing it when `olds` had the stored one, i.e. an explicit update).
 * `readOnly` (at check) only refuses a definition that differs.
 */
async function agreeDefinition(
  props: Props,
  pool: ResolvedPool,
  olds?: Props,
  readOnly = false,
): Promise<void> {
  const { config } = resolveLedger(props.ledger);
  if (!config) return;
  const previous = olds && resolveLedger(olds.ledger).config ? resolvePool(poolSpecOf(olds)).pool : undefined;
  const mine = { definition: poolDefinition(pool), stack: String(props.stack), owner: String(props.poolId) };
  await new PoolDefinitions(config).agree(mine, previous && poolDefinition(previous), readOnly);
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
    // The pool's identity is made once, at its first check, and kept: renamed or moved into a
    // component with an alias, it is the same pool to its holders and its ledger.
    if (typeof olds.poolId === "string") news.poolId = olds.poolId;
    const malformed = shapeFailures(news, ipPoolInputs);
    if (malformed.length > 0) return { inputs: news, failures: malformed };
    if (hasUnknown(poolSpecOf(news)) || hasUnknown(news.ledger)) return { inputs: news };
    const { pool, failures } = resolvePool(poolSpecOf(news));
    failures.push(...resolveLedger(news.ledger).failures);
    if (pool && failures.length === 0 && news.ledger !== undefined) {
      await identify(olds, news, failures);
      // A shared pool: its definition is checked at preview, and written by `up` (create or update).
      const changing = olds.poolId !== undefined && !sameSpec(olds, news) ? olds : undefined;
      if (changing && failures.length === 0) await checkStranded(news, pool, failures);
      if (failures.length === 0) {
        await agreeDefinition(news, pool, changing, true).catch((e: unknown) =>
          failures.push(failureOf("ledger", e, "LEDGER_UNAVAILABLE")),
        );
      }
      return { inputs: failures.length === 0 ? outputsOf(news, pool) : news, failures };
    }
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
    // Moving a pool to another ledger moves its holders' records too: a new pool, not an update.
    // Another ledger (namespace and name) is another pool; its lock settings and context are updates,
    // and so is putting a stack-local pool onto a ledger (each holder's update claims its addresses).
    const ledgerChanged = ledgerKey(olds.ledger) !== "" && ledgerKey(olds.ledger) !== ledgerKey(news.ledger);
    const settingsChanged = JSON.stringify(olds.ledger ?? null) !== JSON.stringify(news.ledger ?? null);
    // A stack identity new to the state (a stack of an earlier version) is an update.
    const changes = settingsChanged || !sameSpec(olds, news) || olds.stackId !== news.stackId;
    return { changes, replaces: ledgerChanged ? ["ledger"] : [] };
  },

  async create(inputs) {
    const { pool } = resolvePool(poolSpecOf(inputs));
    await agreeDefinition(inputs, pool!);
    return { id: String(inputs.poolId).split("::").pop()!, outs: outputsOf(inputs, pool!) };
  },

  async read(id, props) {
    const { pool } = resolvePool(poolSpecOf(props));
    if (!pool) return { id, props };
    assertSameCluster(props, props.ledger, `pool ${String(props.poolId)}`, "nothing was recorded");
    const ledger = ledgerFor(props, props.ledger, `IpPool ${props.poolId} (refresh)`);
    const holders = await ledger.holders(String(props.poolId));
    const taken = new AddressSet();
    for (const entry of holders.keys()) takeEntry(taken, entry);
    const never = [...pool.exclude, ...pool.reserved];
    const free = pool.rangeSets.reduce((sum, set) => sum + freeCount(set, never, taken), 0n);
    const allocations = [...holders]
      .map(([ip, owner]) => ({ ip, owner }))
      .sort((a, b) => (a.ip < b.ip ? -1 : 1));
    return { id, props: { ...outputsOf(props, pool), allocations, free: free.toString() } };
  },

  async update(_id, olds, news) {
    const { pool, failures } = resolvePool(poolSpecOf(news));
    if (!pool)
      throw new IpamError(failures[0]!.code, failures.map((f) => `${f.property}: ${f.reason}`).join("; "));
    const lost = await stranded(news, pool);
    if (lost.length > 0) throw new IpamError("POOL_IN_USE", strandFailure(lost).reason);
    await agreeDefinition(news, pool, olds);
    return { outs: outputsOf(news, pool) };
  },

  async delete(_id, props) {
    assertSameCluster(props, props.ledger, `pool ${String(props.poolId)}`, "nothing was deleted");
    const holders = await holderList(props);
    if (holders.length > 0) {
      throw new IpamError(
        "POOL_IN_USE",
        `pool ${props.poolId} still has allocations: ${holders.join(", ")}; ` +
          `delete or move those resources first (they are released when deleted)`,
      );
    }
  },
};

/** A shared pool's `stackId` and `cluster`: kept from the state, or found for a new one. */
async function identify(olds: Props, news: Props, failures: Failure[]): Promise<void> {
  try {
    news.stackId = olds.stackId ?? (await stackIdentity(String(news.stack)));
  } catch (e) {
    failures.push(failureOf("ledger", e, "LEDGER_UNAVAILABLE"));
  }
  const elsewhere = pinCluster(olds, news, news.ledger, `pool ${String(news.poolId)}`);
  if (elsewhere) failures.push(inputFailure("ledger.context", elsewhere, "INVALID_CONFIG"));
}

async function checkStranded(news: Props, pool: ResolvedPool, failures: Failure[]): Promise<void> {
  const lost = await stranded(news, pool).catch((e: unknown) => [
    `(cannot list holders: ${errorMessage(e)})`,
  ]);
  if (lost.length > 0) failures.push(strandFailure(lost));
}

function strandFailure(lost: string[]): Failure {
  return inputFailure(
    "ranges",
    `this change leaves held addresses outside the pool: ${lost.join(", ")}; ` +
      `move or delete those allocations first, or keep their addresses inside the ranges`,
    "POOL_IN_USE",
  );
}
