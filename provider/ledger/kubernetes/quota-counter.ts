import { createHash } from "node:crypto";
import type * as k8s from "@kubernetes/client-node" with { "resolution-mode": "import" };
import { IpamError } from "../../core/ipam-error";
import { batchRetryBudgetMs, writeBatched, type WriteQueue } from "../../core/write-batch";
import { retryOnConflict } from "../../kube/conflict-retry";
import { isAlreadyExists, isConflict, isNotFound } from "../../kube/kube-errors";
import { entryCost, quotaExceeded, quotaGroupOf, type QuotaGroup } from "../quota-rules";
import { addressOfClaimName, claimName, poolLabel, roleLabel, roles } from "./claim-names";
import { isLive, type Claim, type ClaimStore } from "./claim-store";
import { ledgerUnavailable } from "./ledger-unavailable";
import { counterBytes, counterFull, counterTooLarge, keyBytes, refusedAsTooLarge } from "./counter-size";
import { objectLimit } from "./object-sizes";
import type { StoredQuotas } from "./marker-range";

// The quotas of a shared pool, counted exactly: one counter object per quota group (a ConfigMap
// `<pool>.quota-<16 hex of sha256(group key)>`) lists the claim objects counted in it, by name, with
// the uid of each object that registered (`<uid>@<resourceVersion>` for one registered before a
// write that moves it into the group). A registration is a read-modify-write carrying the counter's
// resourceVersion, so of two writers in one group only one passes on what the other read; the Lease
// and the views play no part. A group's usage is the summed size of the entries listed. Listing
// more than is held is safe (it refuses early); listing less is not. Why no group exceeds its
// limit, race by race:
//
// - Two stacks of one group registering at its limit: both read the counter; the first write wins,
//   the second gets 409, reads again, finds the group full and is refused. In one process, the
//   registrations waiting for a counter are one write (a deployment's parallel checks).
// - An object counts only once it is live (a claim, or a hold not lapsed), and it becomes live only
//   by a write after its registration: a new entry is created as a lapsed hold, registered, then
//   written as what it is (entry-writes.ts). A crash between create and register leaves a lapsed
//   hold, which counts nowhere and anyone may take over. A crash after registering leaves a listed
//   lapsed hold: counted until it is pruned. (A process that has not read the rule yet creates the
//   entry live, then registers it, and deletes it if there is no room: the ledger reads the rule
//   with its first look at the pool, so that does not happen there.)
// - An object written for another stack (a lapsed hold taken over; a claim of the stack rewritten
//   with its identity or adopted under another name) registers in its new group before the write,
//   naming the resourceVersion the write carries: while the object still has that version the write
//   may land, so the registration stays; once it has another, the write landed (the object is in
//   the group) or never will (pruned). Nothing is taken back on failure: another writer of the same
//   object and version may count on the same registration. Writes that keep the object's stack
//   (renewing a hold, claiming it) change no group: an object not listed (written before the quotas)
//   registers before the write, and needs room.
// - Release: the object is deleted, then its registration removed; a crash between leaves it listed
//   until a registration needs the room (its object is gone: pruned).
// - Pruning, when a registration finds no room or the API server refuses the counter's write for
//   another reason than a change meanwhile (it grew past what a ConfigMap holds: without what is
//   gone it may fit; if it still does not, the refusal says so): the pool is listed once, after the
//   counter was read (so every object registered in what was read is in that list unless deleted
//   since, for good), and a registration is dropped when its object is gone (or another object has its name),
//   belongs to another group (and no longer has the version the registration named, if it named
//   one), or is a hold lapsed for over a minute, which is deleted first (preconditioned on what was
//   read, so its owner cannot renew it uncounted; a minute, so a new entry in flight keeps its
//   room). The write of the pruned counter carries the resourceVersion read, so nothing registered
//   meanwhile is lost.
// - A quota lowered below usage: the listed entries stay (renewing or claiming a listed entry needs
//   no room); every new one is refused until releases bring the group under its limit.
// - The quotas changed (set on a pool with entries, a stack moved into a pattern, a quota removed
//   and later restored): each counter records the version of the quotas it counts under (the
//   definition's `quotasVersion`, new at every change, so a rule restored to an earlier text is
//   another version: while it was away, its groups' entries came and went uncounted), and the first
//   registration under another version lists the pool and adds every live object of the group
//   (they stay, as when a quota is lowered; what it lists that no longer counts is pruned when room
//   is needed). A write in flight as the quotas change is decided under the version it read (a new
//   object reads it after it exists, so that is one read a few milliseconds before its
//   registration); the change binds the writes that read it.

/** How long a lapsed hold keeps its registration when room is needed (a new entry's is in flight). */
export const lapsedGraceMs = 60_000;

/** The fields a claim object's quota group is decided by. */
export type Holder = Pick<Claim, "stack" | "stackId" | "nodeId" | "malformed">;

/** The group `c` counts in under `q`; none for a node address or a malformed object, or without a limit. */
export function groupOf(q: StoredQuotas | undefined, c: Holder): QuotaGroup | undefined {
  if (!q || c.nodeId !== undefined || c.malformed !== undefined) return undefined;
  return quotaGroupOf(q.rules, c.stack, c.stackId);
}

/** The name of the counter object of `group` in pool `pool`. */
export const counterName = (pool: string, group: QuotaGroup): string =>
  `${pool}.quota-${createHash("sha256").update(group.key).digest("hex").slice(0, 16)}`;

/** A counter as read: the version of the quotas it counts under and its registrations by object name. */
export interface Counter {
  /** The `version` of the StoredQuotas it counts under (data key `rule`); "" for none yet. */
  rule: string;
  entries: Map<string, string[]>;
  /** "" when it does not exist. */
  resourceVersion: string;
}

/** A change to a counter: register the object `uid` at `name` for stack `who`, or drop it. */
type Op =
  | { kind: "admit"; name: string; uid: string; token: string; who: string; fresh: boolean }
  | { kind: "drop"; name: string; uid: string };

/**
 * How a registration's object is written: `new` (created as a lapsed hold, then written live), `kept`
 * (an existing object written for the same stack), `moved` (an existing object written for another).
 */
export type Registration = "new" | "kept" | "moved";

/** A change waiting for its counter's next write in this process (see write-batch.ts). */
interface Queued {
  op: Op;
  group: QuotaGroup;
  /** The quotas an admission is decided under (drops go with any). */
  terms?: StoredQuotas;
  counters: QuotaCounters;
}

/** One counter object's waiting changes in this process, and the counter as last read or written. */
type CounterQueue = WriteQueue<Queued, IpamError | undefined, Counter>;

/**
 * The quota counters of one pool: registering an entry's claim object in its group when the group
 * has room, and removing it once the object is gone (see the file's comment).
 */
export class QuotaCounters {
  /**
   * @param store - the pool's claim objects.
   * @param what - the pool as messages name it.
   * @param collect - deletes a lapsed hold (with what else it registered, but not in a counter),
   *   preconditioned on its uid and resourceVersion; false when it changed since it was read.
   * @param now - the clock that decides whether a hold has lapsed.
   */
  constructor(
    readonly store: ClaimStore,
    private readonly what: string,
    private readonly collect: (lapsed: Claim) => Promise<boolean>,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Makes sure the claim object `at` of `entry`, written (or about to be written) with `holder`'s
   * stack, is counted in that stack's group under `q`: nothing without a limit or when it is listed
   * already and `kept`, otherwise it is listed if the group has room (a `new` or `moved` object must
   * fit even when listed: a count of the pool may have found it, or its earlier holder).
   * @throws IpamError QUOTA_EXCEEDED naming the rule, the group's usage and who set it;
   *   INVALID_CONFIG for a fresh object when the stored quotas are no rule (what is held already
   *   is renewed and claimed uncounted); LEDGER_UNAVAILABLE; CONFLICT.
   */
  async register(
    q: StoredQuotas | undefined,
    entry: string,
    at: Pick<Claim, "uid" | "resourceVersion">,
    holder: Holder,
    how: Registration,
  ): Promise<void> {
    const fresh = how !== "kept";
    if (q?.problem !== undefined && fresh) {
      throw new IpamError(
        "INVALID_CONFIG",
        `the quotas stored with ${this.what} (ConfigMap "${this.store.pool}.pool", key quotas) are no quota ` +
          `rule (${q.problem}): no new entry is held until the pool's owner, ${q.setBy}, sets them again`,
      );
    }
    const group = groupOf(q, holder);
    if (!group) return;
    const name = claimName(this.store.pool, entry);
    const token = how === "moved" ? `${at.uid}@${at.resourceVersion}` : at.uid;
    const op: Op = { kind: "admit", name, uid: at.uid, token, who: holder.stack, fresh };
    const refusal = await this.enqueue({ op, group, terms: q });
    if (refusal) throw refusal;
  }

  /** Removes the registration of `c`, which was deleted, from its group under `q`. */
  async release(q: StoredQuotas | undefined, c: Claim): Promise<void> {
    const group = groupOf(q, c);
    if (group)
      await this.enqueue({ op: { kind: "drop", name: claimName(this.store.pool, c.ip), uid: c.uid }, group });
  }

  /** Reads a counter (empty and without resourceVersion when it does not exist). */
  async read(name: string): Promise<Counter> {
    let cm: k8s.V1ConfigMap;
    try {
      cm = await this.store.clients.core.readNamespacedConfigMap({ name, namespace: this.store.namespace });
    } catch (err) {
      if (isNotFound(err)) return { rule: "", entries: new Map(), resourceVersion: "" };
      throw ledgerUnavailable(`reading quota counter "${name}"`, err, this.store.place);
    }
    const entries = new Map<string, string[]>();
    for (const [key, value] of Object.entries(cm.data ?? {})) {
      if (key.startsWith(`${this.store.pool}.`)) entries.set(key, value.split(" ").filter(Boolean));
    }
    return { rule: cm.data?.rule ?? "", entries, resourceVersion: cm.metadata?.resourceVersion ?? "" };
  }

  private enqueue(item: Omit<Queued, "counters">): Promise<IpamError | undefined> {
    const name = counterName(this.store.pool, item.group);
    const key = `${this.store.clients.server}\u0000${this.store.namespace}\u0000${name}`;
    return writeBatched<Queued, IpamError | undefined, Counter>(
      "quota-counter",
      key,
      { ...item, counters: this },
      {
        // Admissions under one version of the quotas at a time (changed meanwhile: the later next).
        select: (pending) => {
          const terms = pending.find((i) => i.terms)?.terms;
          return pending.filter((i) => !i.terms || i.terms.version === terms?.version);
        },
        write: (batch, q) => {
          const terms = batch.find((i) => i.terms)?.terms;
          const group = batch.find((i) => i.terms)?.group ?? batch[0]!.group;
          return batch[0]!.counters.apply(q, name, group, terms, batch);
        },
      },
    );
  }

  /** One read-modify-write of counter `name` carrying every change of `batch`; the refusal of each. */
  private apply(
    q: CounterQueue,
    name: string,
    group: QuotaGroup,
    terms: StoredQuotas | undefined,
    batch: Queued[],
  ): Promise<(IpamError | undefined)[]> {
    // A drop must see what is there: no answer from the cache, where it may not be yet.
    const fresh = batch.some((b) => b.op.kind === "drop");
    return retryOnConflict(
      `counting the entries of ${group.rule} in ${this.what}`,
      async (n) => {
        // The cache saves a read while this process is the counter's only writer; when it is stale,
        // the write fails and the counter is read at once (no backoff: no one else lost to this one).
        for (let cached = n === 1 && !fresh && q.cache !== undefined; ; cached = false) {
          const read = cached ? q.cache! : await this.read(name);
          q.cache = read;
          try {
            return await this.change(q, name, group, terms, batch, read);
          } catch (e) {
            if (!cached || !isConflict(e)) throw e;
          }
        }
      },
      { budgetMs: batchRetryBudgetMs },
    );
  }

  private async change(
    q: CounterQueue,
    name: string,
    group: QuotaGroup,
    terms: StoredQuotas | undefined,
    batch: Queued[],
    read: Counter,
  ): Promise<(IpamError | undefined)[]> {
    let pool: Promise<Map<string, Claim>> | undefined;
    const listed = () => (pool ??= this.listed());
    let { entries, rule } = read;
    if (terms && (read.resourceVersion === "" || rule !== terms.version)) {
      // Counted under another version of the quotas, or not yet: every live object the group has
      // now is listed (a lapsed hold, perhaps a new entry in flight, registers itself when it is
      // written live).
      const at = this.now();
      entries = new Map([...entries].map(([k, v]) => [k, [...v]]));
      for (const [object, c] of await listed()) {
        const tokens = entries.get(object) ?? [];
        if (isLive(c, at) && groupOf(terms, c)?.key === group.key && !tokens.includes(c.uid))
          entries.set(object, [...tokens, c.uid]);
      }
      rule = terms.version;
    }
    let next = this.decide(entries, batch, group, rule);
    let pruned = false;
    const prune = async () => {
      pruned = true;
      return this.decide(await this.prune(entries, group, terms!, await listed()), batch, group, rule);
    };
    if (next.refusals.some(Boolean)) next = await prune();
    if (rule === read.rule && same(next.entries, read.entries)) return next.refusals;
    try {
      q.cache = await this.write(name, group, rule, next.entries, read.resourceVersion);
    } catch (e) {
      // Refused for another reason than a change meanwhile (the counter grew past what a ConfigMap
      // holds, most likely): without what is gone it may fit. Drops alone only shrink it.
      if (isConflict(e) || pruned || !terms) throw e;
      next = await prune();
      try {
        q.cache = await this.write(name, group, rule, next.entries, read.resourceVersion);
      } catch (again) {
        throw isConflict(again) || !refusedAsTooLarge(again)
          ? again
          : counterTooLarge(this.what, name, group, next.entries, again);
      }
    }
    return next.refusals;
  }

  /**
   * `entries` with the changes of `batch` in order: an admission without room is refused, and so is
   * one that would take the counter past the object limit (LEDGER_FULL, before it is written).
   */
  private decide(entries: Map<string, string[]>, batch: Queued[], group: QuotaGroup, rule: string) {
    const next = new Map([...entries].map(([k, v]) => [k, [...v]]));
    let used = [...next.keys()].reduce((sum, name) => sum + this.cost(name), 0n);
    const limit = objectLimit();
    let bytes = counterBytes(group, rule, next);
    const refusals = batch.map(({ op, terms }): IpamError | undefined => {
      const tokens = next.get(op.name) ?? [];
      if (op.kind === "drop") {
        const others = tokens.filter((t) => uidOf(t) !== op.uid);
        if (others.length > 0) next.set(op.name, others);
        else if (next.delete(op.name)) used -= this.cost(op.name);
        bytes += keyBytes(op.name, others) - keyBytes(op.name, tokens);
        return undefined;
      }
      if (!op.fresh && tokens.some((t) => uidOf(t) === op.uid)) return undefined;
      // Listed already (found by a count of the pool, or another registration of the name): it must fit.
      const cost = this.cost(op.name);
      const after = tokens.length > 0 ? used : used + cost;
      if (after > BigInt(group.limit))
        return quotaExceeded(this.what, op.who, group, after - cost, cost, terms!.setBy);
      if (tokens.includes(op.token)) return undefined;
      const grown = bytes + keyBytes(op.name, [...tokens, op.token]) - keyBytes(op.name, tokens);
      if (grown > limit)
        return counterFull(this.what, counterName(this.store.pool, group), group, next.size, bytes, limit);
      next.set(op.name, [...tokens, op.token]);
      bytes = grown;
      used = after;
      return undefined;
    });
    return { entries: next, refusals };
  }

  /** `entries` without the registrations that no longer count (see the file's comment). */
  private async prune(
    entries: Map<string, string[]>,
    group: QuotaGroup,
    terms: StoredQuotas,
    listed: Map<string, Claim>,
  ): Promise<Map<string, string[]>> {
    const at = this.now();
    const kept = new Map<string, string[]>();
    const lapsed: Promise<[string, boolean]>[] = [];
    for (const [name, tokens] of entries) {
      const c = listed.get(name);
      const inGroup = c !== undefined && groupOf(terms, c)?.key === group.key;
      // A registration naming the version its write carries stays while the object has it.
      const counts = (t: string) => uidOf(t) === c?.uid && (inGroup || t === `${c.uid}@${c.resourceVersion}`);
      const own = tokens.filter(counts);
      if (!c || own.length === 0) continue;
      kept.set(name, own);
      if (c.state === "hold" && c.expires + lapsedGraceMs <= at)
        lapsed.push(
          this.collect(c).then(
            (gone) => [name, gone],
            () => [name, false],
          ),
        );
    }
    for (const [name, gone] of await Promise.all(lapsed)) if (gone) kept.delete(name);
    return kept;
  }

  /** The pool's claim objects by name, listed now. */
  private async listed(): Promise<Map<string, Claim>> {
    const claims = await this.store.list();
    return new Map(claims.map((c) => [claimName(this.store.pool, c.ip), c]));
  }

  private cost(name: string): bigint {
    const entry = addressOfClaimName(this.store.pool, name);
    return entry === undefined ? 1n : entryCost(entry);
  }

  private async write(
    name: string,
    group: QuotaGroup,
    rule: string,
    entries: Map<string, string[]>,
    resourceVersion: string,
  ): Promise<Counter> {
    const body: k8s.V1ConfigMap = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name,
        namespace: this.store.namespace,
        labels: { [poolLabel]: this.store.pool, [roleLabel]: roles.quota },
        ...(resourceVersion ? { resourceVersion } : {}),
      },
      data: { group: group.key, rule, ...Object.fromEntries([...entries].map(([k, v]) => [k, v.join(" ")])) },
    };
    const { core } = this.store.clients;
    const namespace = this.store.namespace;
    try {
      const written = resourceVersion
        ? await core.replaceNamespacedConfigMap({ name, namespace, body })
        : await core.createNamespacedConfigMap({ namespace, body });
      return { rule, entries, resourceVersion: written.metadata?.resourceVersion ?? "" };
    } catch (err) {
      if (isConflict(err) || isAlreadyExists(err) || isNotFound(err))
        throw Object.assign(new Error(`quota counter "${name}" changed since it was read`), { code: 409 });
      throw ledgerUnavailable(`writing quota counter "${name}"`, err, this.store.place);
    }
  }
}

/** The uid of the object a registration names. */
const uidOf = (token: string): string => token.split("@")[0]!;

function same(a: Map<string, string[]>, b: Map<string, string[]>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k)?.join(" ") !== v.join(" ")) return false;
  return true;
}
