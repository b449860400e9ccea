import { errorMessage, failureOf, inputFailure, type Failure } from "../../core/failure";
import { AddressSet, freeCount, IpamError, prefixContains } from "../../allocator";
import { PoolDefinitions, type Standing } from "../../ledger/kubernetes/pool-definition";
import { canonicalQuotas, quotaProblems, type PoolQuotas } from "../../ledger/quota-rules";
import { poolUsage, readSharedPool, referenceFigures, type SharedPool } from "../pool/shared-pool-ref";
import { poolDefinition } from "../pool/canonical-definition";
import {
  assertSameCluster,
  ledgerFor,
  ledgerKey,
  pinCluster,
  resolveLedger,
  sharedLedgerFor,
} from "../pool/ledger-option";
import {
  canonicalRanges,
  checkRequestable,
  poolSize,
  poolSpecKeys,
  poolSpecOf,
  resolvePool,
  type ResolvedPool,
} from "../pool/pool-spec";
import { withoutProvider, type Props, type ProviderImpl } from "../provider-props";
import { hasUnknown } from "../../core/unknowns";
import { stackIdentity } from "../../ledger/stack/stack-identity";
import { exportStackResources, isStackMissing } from "../../ledger/stack/stack-checkpoint";
import { poolRecords, readRecord } from "../../ledger/stack/allocation-record";
import { warnOnce } from "../../core/warnings";
import { shapeFailures } from "../input-shape";
import { ipPoolInputs } from "../resource-inputs";
import { isBlock, takeEntry } from "../../ledger/held-entry";
import { sharedRuleProblems } from "../pool/shared-rule-width";
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
  let held: [string, string][];
  let elsewhere: ReadonlySet<string> = new Set();
  try {
    held = [...(await ledger.holders(String(props.poolId)))].filter(([, owner]) => own(owner));
    // Only a shared pool the stack still holds in is asked which IpPool its holders hold through.
    if (held.length > 0 && resolveLedger(props.ledger).config) elsewhere = await heldThroughOtherPools(props);
  } catch (e) {
    if (!isStackMissing(e)) throw e;
    // Renamed since: the checkpoint cannot be found by the name this pool recorded. Its holders are
    // resources of the stack that depend on it, so the engine has deleted them before it.
    warnOnce(`pool ${String(props.poolId)}: ${errorMessage(e)}; deleting it without listing its holders`);
    return [];
  }
  return held
    .filter(([, owner]) => !elsewhere.has(owner))
    .map(([ip, owner]) => `${ip} (held by ${owner})`)
    .sort();
}

/**
 * For a shared pool: the stack's holders that hold through another IpPool of the same ledger pool
 * and not through this one, by the records in the stack's checkpoint as it is now (read afresh: the
 * other IpPool and its holders are created in this same update). An IpPool renamed without an
 * alias is one: its new IpPool is created, and its holders replaced onto it, before the old one is
 * deleted, and their claims on the ledger are the new IpPool's.
 */
async function heldThroughOtherPools(props: Record<string, unknown>): Promise<Set<string>> {
  const resources = await exportStackResources(String(props.stack));
  const through = (pool: string) => new Set(poolRecords(resources, pool).map((r) => r.owner));
  const here = through(String(props.poolId));
  const other = new Set<string>();
  for (const r of resources) {
    const record = readRecord(r.outputs) ?? readRecord(r.inputs);
    if (record && record.pool !== props.poolId && !here.has(r.urn)) other.add(r.urn);
  }
  return other;
}

/**
 * For a shared pool: makes the stored definition agree with this pool's (see PoolDefinitions.agree),
 * and says whether this stack owns it. `readOnly` (at check) only decides and refuses.
 */
async function agreeDefinition(
  props: Props,
  pool: ResolvedPool,
  readOnly = false,
): Promise<Standing | undefined> {
  const { config } = resolveLedger(props.ledger);
  if (!config) return undefined;
  const quotas = canonicalQuotas(props.quotas as PoolQuotas | undefined);
  const mine = {
    definition: poolDefinition(pool),
    stack: String(props.stack),
    owner: String(props.poolId),
    ...(typeof props.stackId === "string" ? { stackId: props.stackId } : {}),
    ...(quotas ? { quotas } : {}),
  };
  return new PoolDefinitions(config).agree(mine, { adopt: props.adopt === true, readOnly });
}

/** Problems of the owner's settings `quotas` and `adopt`, which only a shared pool takes. */
function ownerSettingFailures(news: Props): Failure[] {
  const failures = quotaProblems(news.quotas).map(([property, reason]) => inputFailure(property, reason));
  for (const key of ["quotas", "adopt"] as const) {
    if (news[key] !== undefined && news.ledger === undefined)
      failures.push(
        inputFailure(key, `${key} is for a pool shared through a ledger: set ledger, or leave ${key} out`),
      );
  }
  return failures;
}

function outputsOf(props: Props, pool: ResolvedPool) {
  const { [rewriteKey]: _rewrite, ...kept } = withoutProvider(props);
  return { ...kept, rangeSets: canonicalRanges(pool), size: poolSize(pool) };
}

/**
 * The input `check` adds when the owner's stored definition is not in this version's format (see
 * Standing.rewrites): a change, so `up` writes it again; never an output, so the next check without
 * it is none.
 */
const rewriteKey = "rewriteDefinition";

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
    if (news.shared === true) return checkReference(olds, news);
    if ([poolSpecOf(news), news.ledger, news.quotas, news.adopt].some(hasUnknown)) return { inputs: news };
    const { pool, failures } = resolvePool(poolSpecOf(news));
    failures.push(...resolveLedger(news.ledger).failures, ...ownerSettingFailures(news));
    if (pool && news.ledger !== undefined)
      failures.push(...sharedRuleProblems(pool).map((reason) => inputFailure("prefixLengths", reason)));
    if (pool && failures.length === 0 && news.ledger !== undefined) {
      await identify(olds, news, failures);
      // A shared pool: its definition is checked at preview, and written by `up` (create or update).
      const standing =
        failures.length === 0
          ? await agreeDefinition(news, pool, true).catch((e: unknown) => {
              failures.push(failureOf("ledger", e, "LEDGER_UNAVAILABLE"));
              return undefined;
            })
          : undefined;
      // A change of the definition must fit every stack's holders: the owner's, or one taking it over.
      const changing = olds.poolId !== undefined && !sameSpec(olds, news);
      if (standing && (changing || standing.redefines)) await checkStranded(news, pool, failures);
      if (failures.length > 0 || !standing) return { inputs: news, failures };
      const rewrite = standing.rewrites ? { [rewriteKey]: true } : {};
      return { inputs: { ...outputsOf(news, pool), ownedBy: standing.ownedBy, ...rewrite }, failures };
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
    // So is a change of owner or quotas, or (a reference) of what its owner decides (referenceKeys).
    // And an owner's definition stored in an earlier format (rewriteKey).
    const shown = [
      "stackId",
      "quotas",
      "adopt",
      "ownedBy",
      rewriteKey,
      ...(news.shared === true ? referenceKeys : []),
    ];
    const changes =
      settingsChanged ||
      !sameSpec(olds, news) ||
      shown.some((k) => JSON.stringify(olds[k] ?? null) !== JSON.stringify(news[k] ?? null));
    return { changes, replaces: ledgerChanged ? ["ledger"] : [] };
  },

  async create(inputs) {
    const id = String(inputs.poolId).split("::").pop()!;
    if (inputs.shared === true) return { id, outs: withoutProvider(inputs) };
    const { pool } = resolvePool(poolSpecOf(inputs));
    const standing = await writeDefinition(inputs, pool!);
    return { id, outs: { ...outputsOf(inputs, pool!), ...(standing ? { ownedBy: standing.ownedBy } : {}) } };
  },

  async read(id, props) {
    if (props.shared === true) return readReference(id, props);
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

  async update(_id, _olds, news) {
    if (news.shared === true) return { outs: withoutProvider(news) };
    const { pool, failures } = resolvePool(poolSpecOf(news));
    if (!pool)
      throw new IpamError(failures[0]!.code, failures.map((f) => `${f.property}: ${f.reason}`).join("; "));
    const standing = await writeDefinition(news, pool, true);
    return { outs: { ...outputsOf(news, pool), ...(standing ? { ownedBy: standing.ownedBy } : {}) } };
  },

  async delete(_id, props) {
    // A reference defines nothing: the pool stays its owner's. So does an owner's pool (tenants keep
    // their addresses; another stack takes ownership with adopt).
    if (props.shared !== true) {
      assertSameCluster(props, props.ledger, `pool ${String(props.poolId)}`, "nothing was deleted");
      const holders = await holderList(props);
      if (holders.length > 0) {
        throw new IpamError(
          "POOL_IN_USE",
          `pool ${props.poolId} still has allocations: ${holders.join(", ")}; ` +
            `delete or move those resources first (they are released when deleted)`,
        );
      }
    }
    await releaseHolds(props);
  },
};

/**
 * At the delete of a shared pool's IpPool (its holders deleted before it): deletes the stack's holds
 * left in the pool, those of holders whose check ran and whose create never did (an `up` that
 * failed), which would keep room of the stack's quota group until they lapse. Never fatal: a hold
 * lapses anyway; nothing is released on another cluster than the one recorded.
 */
async function releaseHolds(props: Props): Promise<void> {
  const what = `pool ${String(props.poolId)}`;
  try {
    assertSameCluster(props, props.ledger, what, "its holds were not released");
    await sharedLedgerFor(props, props.ledger, `IpPool ${props.poolId} (delete)`)?.releaseHolds();
  } catch (e) {
    warnOnce(`${what}: the stack's holds in it were left to lapse: ${errorMessage(e)}`);
  }
}

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

/**
 * Writes a shared pool's definition at `up` (create, update): a definition that would leave any
 * stack's holder outside the pool is refused first (at every update with `always`; at a create when
 * the pool is re-created, or taken over, with another definition than the stored one). For a shared
 * pool the list of holders and the write are made under the pool's Lease, under which tenants write
 * their holds and claim the holds that lapse: none is written in between, so none is missed.
 */
async function writeDefinition(
  props: Props,
  pool: ResolvedPool,
  always = false,
): Promise<Standing | undefined> {
  const write = async () => {
    const decided = await agreeDefinition(props, pool, true);
    if (always || decided?.redefines) {
      const lost = await stranded(props, pool);
      if (lost.length > 0) throw new IpamError("POOL_IN_USE", strandFailure(lost).reason);
    }
    return agreeDefinition(props, pool);
  };
  const shared = sharedLedgerFor(props, props.ledger, `IpPool ${String(props.poolId)} (definition)`);
  return shared ? shared.withPoolLock(write) : write();
}

/**
 * The outputs of a reference that diff compares: what the owner decides. What the stacks use of the
 * pool (free, used, quota) is recorded at each create and update and read again by refresh, but is
 * no change of its own: another stack's allocation changes it.
 */
const referenceKeys = ["definition", "size", "rangeSets"] as const;

/** The check of a tenant's reference ({@link IpPool.shared}): the stored pool and its figures, at preview. */
async function checkReference(olds: Props, news: Props): Promise<{ inputs: Props; failures: Failure[] }> {
  if (hasUnknown(news.ledger)) return { inputs: news, failures: [] };
  const given = [...poolSpecKeys, "quotas", "adopt"].filter((k) => news[k] !== undefined);
  const failures = given.map((k) =>
    inputFailure(k, `a reference to a shared pool takes only its ledger: its owner defines ${k}`),
  );
  failures.push(...resolveLedger(news.ledger).failures);
  if (failures.length > 0) return { inputs: news, failures };
  await identify(olds, news, failures);
  if (failures.length > 0) return { inputs: news, failures };
  const { shared, failures: readFailures } = await readSharedPool(news.ledger, "ledger");
  if (!shared) return { inputs: news, failures: readFailures };
  try {
    return { inputs: { ...news, ...(await referenceState(news, shared)) }, failures: [] };
  } catch (e) {
    return { inputs: news, failures: [failureOf("ledger", e, "LEDGER_UNAVAILABLE")] };
  }
}

/** What a reference records: the pool as its owner decided it, and the stacks' usage as of now. */
async function referenceState(props: Props, shared: SharedPool) {
  const me = { stack: String(props.stack), stackId: String(props.stackId) };
  return { ...referenceFigures(shared), ...(await poolUsage(props.ledger, shared, me)) };
}

/** A reference's refresh: its figures read again. */
async function readReference(id: string, props: Props) {
  assertSameCluster(props, props.ledger, `pool ${String(props.poolId)}`, "nothing was recorded");
  const { shared, failures } = await readSharedPool(props.ledger, "ledger");
  if (!shared) throw new IpamError(failures[0]!.code ?? "NOT_FOUND", failures[0]!.reason);
  const { quota: _stale, ...rest } = props;
  return { id, props: { ...rest, ...(await referenceState(props, shared)) } };
}
