import { IpamError } from "../../allocator";
import { kubeClients, type KubeClients } from "../../kube/kube-config";
import { retryOnConflict } from "../../kube/conflict-retry";
import { isConflict } from "../../kube/kube-errors";
import { leaseName } from "./claim-names";
import {
  ClaimStore,
  describeHolder,
  holderKey,
  isLive,
  nodeReferrer,
  ofStack,
  ownedBy,
  tookFrom,
  type Claim,
  type ClaimFields,
  type StackRef,
} from "./claim-store";
import type { Ledger, Plan, PlanRequest } from "../ledger";
import type { CarriedRecord } from "../stack/allocation-record";
import { leftToItsOwnCheck } from "../planner";
import { decidePlan, withRecords, type StagedPlan } from "./plan-decision";
import { leaseLocker } from "./lease-lock";
import { inProcessLocker, withLock, type Locker } from "../locker";
import { batched, type Outcome } from "./plan-batch";
import { claimView } from "./claim-view";
import { entryWrites } from "./entry-writes";
import { MarkerConflict } from "./block-markers";
import { describeEntry } from "../held-entry";
import { definitionMark } from "./definition-mark";
import { collectHolds, collectPerPlan, lapsedHolds, planCollectsAfterMs } from "./lapsed-holds";
import { ownerOf, PoolDefinitions } from "./pool-definition";
import type { KubeLedgerConfig } from "./ledger-config";

export type { KubeLedgerConfig } from "./ledger-config";

/** Settings of {@link kubeLedger}. */
export interface KubeLedgerOptions {
  /** The stack of every holder this ledger plans for, `<org>/<project>/<stack>`. */
  stack: string;
  /**
   * That stack's identity (`stackIdentity`), which decides what is its own. Without it (node
   * addresses), the stack's name does, as in earlier versions.
   */
  stackId?: string;
  ledger: KubeLedgerConfig;
  /** How long a hold written at `check` keeps its address without being renewed (default 15 min). */
  holdDuration?: number;
  /** Clients; default {@link kubeClients} of the ledger's context and kubeconfig. */
  clients?: KubeClients;
  /** Who is asking, for lock-timeout messages. */
  holder?: string;
  /**
   * The stack's own records of a pool in its state (`stateRecords`): planning counts them as held
   * where the ledger has no live claim (a pool just put on the ledger, claims lost), so two holders
   * of the stack never get one address. Default: none.
   */
  records?: (pool: string) => Promise<CarriedRecord[]>;
}

/** The Kubernetes ledger, with what node addresses (kube-node-addresses) build on. */
export interface KubeLedger extends Ledger {
  /** The pool's claim objects. */
  store: ClaimStore;
  /** Runs `fn` under the pool's Lease and this process's lock for the pool. */
  withPoolLock<T>(fn: () => Promise<T>): Promise<T>;
  /** A hold's fields for `owner` of this stack, expiring after the hold duration. */
  holdFields(owner: string, seq: number): ClaimFields;
  /** The stack every holder of this ledger belongs to. */
  stack: string;
  /** That stack, as claims are told apart by. */
  me: StackRef;
  /** `pool "<name>" (namespace "<ns>")`, for messages. */
  what: string;
  /**
   * What is wrong with the claims of `ips`, which state says `owner` holds (`instance`): for each
   * address without a claim of its own, `missing` (no claim, or only a hold) or `foreign` (another
   * holder's, named). `recent` answers from one list of the pool per process (at most a few seconds
   * old), for a check of many holders; otherwise every claim is read.
   */
  claimProblems(owner: string, ips: readonly string[], recent?: boolean): Promise<ClaimProblem[]>;
  /**
   * Deletes every hold of this stack in the pool (not node addresses), with its quota and marker
   * registrations: what checks planned for holders that were never created (an `up` that failed),
   * at the delete of the stack's pool, after the engine deleted its holders. Each delete is
   * preconditioned on what was read: a hold renewed or taken over meanwhile stays.
   */
  releaseHolds(): Promise<void>;
}

/** An address whose claim is not what its holder's state says. */
export interface ClaimProblem {
  ip: string;
  kind: "missing" | "foreign";
  /** What is wrong, naming the address, the pool and (foreign) the other holder. */
  message: string;
}

const recentLists = new Map<string, { at: number; claims: Promise<Claim[]> }>();

/** One list of a pool's claims shared by the operations of the next few seconds in this process. */
function recentList(key: string, list: () => Promise<Claim[]>): Promise<Claim[]> {
  const hit = recentLists.get(key);
  if (hit && Date.now() - hit.at < 5_000) return hit.claims;
  const claims = list();
  recentLists.set(key, { at: Date.now(), claims });
  claims.catch(() => recentLists.delete(key));
  return claims;
}

/** A claim object as one write found it (`before`, undefined: none) and left it. */
interface Written {
  before: Claim | undefined;
  after: Claim;
}

/**
 * A hold that lapses within this long is claimed under the Lease (see `reserve`): the owner's
 * change of the pool, made under the Lease, may no longer count it.
 */
const lapseMargin = 60_000;

/** Default hold lifetime: a preview's addresses stay held this long for the `up` that follows. */
export const defaultHoldDuration = 15 * 60_000;

/**
 * The ledger of a pool shared across stacks: one ConfigMap per entry (an address or a block) in a
 * namespace of a Kubernetes cluster (see {@link ClaimStore}), planned under a Lease per pool. In a
 * pool whose stored rule has `prefixLengths` min and max, every entry also registers in the markers
 * of the blocks around it, so that a block and anything inside it are never both held, whatever the
 * Lease says (see block-markers.ts and entry-writes.ts).
 *
 * - `plan` (at `check`, preview included) reads the pool's claims from this process's view (listed
 *   once, then kept current by a watch: see claim-view), chooses, and writes a *hold* per address: a create, so the API server's AlreadyExists refuses a second holder of an
 *   address whatever the Lease says. A hold lapses after `holdDuration` unless its owner plans
 *   again (which renews it); a lapsed hold of another owner is taken over by an update carrying its
 *   resourceVersion. An owner that holds what it asks for gets it again, so `up` gets what
 *   `preview` showed, while the pool still hands it out (`PlanRequest.refuses`): a hold the pool
 *   no longer has (the owner changed it after the hold lapsed), or one whose renewal finds another
 *   holder's block around it (a crashed writer never registered it, so that block was claimed over
 *   it), is planned anew, deleted with its registrations, and the plan fails with POOL_CHANGED
 *   naming it and what is held instead.
 * - `reserve` (at `create`) turns the owner's holds into *claims*, or fails naming the stack that
 *   claimed an address in the meantime (never a substitute, never a duplicate). It does not take
 *   the Lease: the Lease orders planning, and a claim is a write preconditioned on what was read.
 *   Except where a hold of a reference (`PlanRequest.definition`) has lapsed or is about to: the
 *   pool's owner changes its definition under the Lease after listing the live holders, so such a
 *   hold is claimed under the Lease, and only while the definition is the one it was planned under
 *   (else POOL_CHANGED).
 * - `release` deletes the owner's claims, preconditioned on their uid and resourceVersion.
 * - Every plan also deletes a few holds of other stacks that lapsed over 15 minutes ago, with their
 *   registrations (see lapsed-holds.ts), so abandoned previews do not grow the pool for good; after
 *   it released the Lease (the deletes are preconditioned, and need no order).
 *
 * `pool` arguments are ignored: the ledger name identifies the pool across stacks. `adopt` takes
 * over addresses held by resources of the same stack only.
 */
export function kubeLedger(opts: KubeLedgerOptions): KubeLedger {
  const cfg = opts.ledger;
  const clients = opts.clients ?? kubeClients(cfg);
  const store = new ClaimStore(clients, cfg.namespace, cfg.name);
  const view = claimView(store);
  const holdFor = opts.holdDuration ?? defaultHoldDuration;
  const holder = opts.holder ?? "an operation";
  const lockConfig = {
    id: leaseName(cfg.name),
    namespace: cfg.namespace,
    lockDuration: cfg.lockDuration,
    lockAcquireTimeout: cfg.lockAcquireTimeout,
  };
  const what = `pool "${cfg.name}" (namespace "${cfg.namespace}")`;
  const definitions = new PoolDefinitions(cfg, clients);
  const entries = entryWrites(store, what, (e) => view.record(e, undefined));
  /** The pool in this process's caches: one per server, namespace and name. */
  const poolKey = `${clients.server}\u0000${cfg.namespace}\u0000${cfg.name}`;
  const me: StackRef =
    opts.stackId === undefined ? { stack: opts.stack } : { stack: opts.stack, stackId: opts.stackId };
  const who = (c: Claim) => describeHolder(c, me);

  // The Lease first, so the process keeps it while its operations queue for the in-process lock.
  const locked = async <T>(fn: () => Promise<T>): Promise<T> => {
    const lease: Locker = leaseLocker({ clients, config: lockConfig }, holder);
    const local = inProcessLocker(
      { ...lockConfig, id: `kube:${clients.server}/${cfg.namespace}/${cfg.name}`, lockDuration: 120_000 },
      holder,
    );
    return withLock(lease, () => withLock(local, fn));
  };

  const hold = (owner: string, seq: number): ClaimFields => ({
    state: "hold",
    stack: opts.stack,
    ...(me.stackId === undefined ? {} : { stackId: me.stackId }),
    owner,
    seq,
    expires: Date.now() + holdFor,
  });

  /** The pool's claims as this process's view has them, with the stack's own records of `pool`. */
  const claimsFor = async (pool: string): Promise<Claim[]> => {
    // The pool's rule too, the first time: a hold it counts is created lapsed until registered.
    const [claims] = await Promise.all([view.claims(), entries.rule.last() ?? entries.rule()]);
    return opts.records ? withRecords(claims, await opts.records(pool), Date.now(), { me, hold }) : claims;
  };

  /** Reads the claim of `ip` into the view (after a lost race: the view was behind). */
  const reread = async (ip: string) => view.record(ip, await store.read(ip));

  /**
   * Writes `fields` for `ip` over whatever `existing` is (a create when there is none), with the
   * markers of a pool that keeps them (see entry-writes). A lost race (AlreadyExists, or 409 on an
   * update) reads that object into the view and throws 409, for the caller's retry to plan again
   * with it; so does an overlapping entry a marker names (its holder goes into the view). With
   * `refuse` (a claim of what was planned), or when the holder is the same owner (which planning
   * again would not avoid), that overlap is IpamError IP_UNAVAILABLE naming the holder instead.
   */
  const put = async (
    ip: string,
    existing: Claim | undefined,
    fields: ClaimFields,
    refuse = false,
  ): Promise<Claim> => {
    let written: Claim | undefined;
    try {
      written = await entries.write(ip, existing, fields, pendingOf(fields));
    } catch (e) {
      if (e instanceof MarkerConflict) {
        view.record(e.holder.ip, e.holder);
        if (ownedBy(e.holder, me, fields.owner)) throw overlapsOwn(ip, e);
        if (refuse) {
          throw new IpamError(
            "IP_UNAVAILABLE",
            `planned ${describeEntry(ip)} in ${what} overlaps ${describeEntry(e.holder.ip)}, held by ` +
              `${who(e.holder)} since it was planned; run the update again to plan another`,
          );
        }
        throw Object.assign(e, { code: 409 });
      }
      if ((e as { code?: number }).code === 409) await reread(ip).catch(() => undefined);
      throw e;
    }
    if (!written) {
      await reread(ip);
      throw Object.assign(new Error(`claim of ${ip} created by someone else meanwhile`), { code: 409 });
    }
    view.record(ip, written);
    return written;
  };

  /** The hold a new claim of a pool with markers is written as until it has registered. */
  const pendingOf = (fields: ClaimFields): ClaimFields | undefined =>
    fields.state === "claim" ? { ...fields, state: "hold", expires: Date.now() + holdFor } : undefined;

  /** An entry that overlaps another entry of its own owner: one claim object cannot be both. */
  const overlapsOwn = (ip: string, e: MarkerConflict) =>
    new IpamError(
      "IP_UNAVAILABLE",
      `${describeEntry(ip)} in ${what} overlaps ${describeEntry(e.holder.ip)}, which ${e.holder.owner} holds ` +
        `already: release that first (e.g. deleteBeforeReplace for a change of a block)`,
    );

  /** Puts `c` into `claims` in place of the entry of its address. */
  const keep = (claims: Claim[], c: Claim) => {
    const i = claims.findIndex((x) => x.ip === c.ip);
    if (i >= 0) claims[i] = c;
    else claims.push(c);
  };

  const planning = { me, what, hold };
  const decide = (req: PlanRequest, claims: Claim[], at: number, outdated: ReadonlyMap<string, string>) =>
    decidePlan(req, claims, at, planning, outdated);

  /**
   * Holds of this process's holders whose renewal could not register them: another holder's entry
   * around them is live, which only a hold whose writer stopped before registering it (a crash, or
   * a timeout after the server applied its create) lets happen. By the object's uid, with why.
   */
  const unregistrable = new Map<string, { uid: string; reason: string }>();

  /** Remembers why the renewal of `c` failed, when it failed registering next to another holder. */
  const noteUnregistrable = (c: Claim | undefined, e: unknown) => {
    if (!c || !(e instanceof MarkerConflict) || !e.around || ownedBy(e.holder, me, c.owner)) return;
    unregistrable.set(c.ip, {
      uid: c.uid,
      reason:
        `it lies inside ${describeEntry(e.holder.ip)}, held by ${who(e.holder)}: the check that wrote ` +
        `it stopped before registering it (a crash or a timeout), so nothing kept that block from being claimed`,
    });
  };

  /**
   * The owner's holds that the pool as the request sees it no longer hands out, with why: a hold
   * outlives the definition it was planned under (a preview, then the owner's change, then `up`);
   * and those whose renewal found another holder's entry around them (see `unregistrable`).
   */
  const outdatedOf = async (req: PlanRequest, claims: readonly Claim[]): Promise<Map<string, string>> => {
    const refuses = req.refuses ?? (async () => undefined);
    const holds = claims.filter((c) => c.state === "hold" && ownedBy(c, me, req.owner));
    const reasons = await Promise.all(
      holds.map(async (c) => {
        const stuck = unregistrable.get(c.ip);
        return [c.ip, stuck?.uid === c.uid ? stuck.reason : await refuses(c.ip)] as const;
      }),
    );
    return new Map(reasons.flatMap(([ip, reason]) => (reason === undefined ? [] : [[ip, reason] as const])));
  };

  /** Writes what {@link decidePlan} staged for `req`, in parallel, keeping `claims` current. */
  const commit = async (req: PlanRequest, staged: StagedPlan, claims: Claim[]): Promise<Plan> => {
    const results = await Promise.allSettled(
      staged.writes.map((w) =>
        put(w.ip, w.existing, w.fields).catch((e: unknown) => {
          if (!staged.fresh) noteUnregistrable(w.existing, e);
          throw e;
        }),
      ),
    );
    const written = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    for (const c of written) keep(claims, c);
    const failed = results.find((r) => r.status === "rejected");
    if (failed) {
      // Nothing half-planned stays held (a dual-stack pool whose second write lost a race).
      if (staged.fresh)
        await releaseIps(
          req.owner,
          written.map((c) => c.ip),
        ).catch(() => undefined);
      throw failed.reason;
    }
    if (staged.outdated) {
      // Held for nothing now: the owner's next plan (and the pool's owner) must not find them.
      for (const c of staged.release ?? []) {
        // With whatever registrations it has (a hold that could not be registered: some of them).
        if (await entries.remove(c).catch(() => false)) view.record(c.ip, undefined);
        unregistrable.delete(c.ip);
      }
      const which = staged.outdated.map((o) => `${describeEntry(o.ip)} (${o.reason})`).join("; ");
      throw new IpamError(
        "POOL_CHANGED",
        `${which}: planned for ${req.owner} in ${what} earlier (e.g. at preview), and no longer ` +
          `available, so it was not claimed; ${staged.plan.ips.join(", ")} is held for it now: run the ` +
          `update again (pulumi preview shows the new plan, pulumi up gets exactly it)`,
      );
    }
    const lost = staged.lost;
    if (lost) {
      throw new IpamError(
        "IP_UNAVAILABLE",
        `address ${lost.ip} in ${what}, planned for ${req.owner} earlier (e.g. at preview), was taken by ` +
          `${who(lost)} after its hold lapsed; ${staged.plan.ips.join(", ")} is held for it now: run the update again`,
      );
    }
    return staged.plan;
  };

  /**
   * Plans `reqs` in order against one view of the pool: each chosen with the addresses of those
   * before it taken, then every hold written at once (writes of different addresses do not depend
   * on each other). One that lost a race (the view was behind) is planned again afterwards, in
   * order, with the view the race updated. `skip` leaves a request out (undefined in the result).
   */
  const planAll = async (
    reqs: readonly PlanRequest[],
    skip?: (req: PlanRequest, claims: Claim[]) => boolean,
  ): Promise<Outcome<Plan>[]> => {
    const claims = await claimsFor(reqs[0]?.pool ?? "");
    const outdated = await Promise.all(reqs.map((req) => outdatedOf(req, claims)));
    const at = Date.now();
    const out: Outcome<Plan>[] = reqs.map(() => ({}));
    const staged: [number, StagedPlan][] = [];
    reqs.forEach((req, i) => {
      if (skip?.(req, claims)) return;
      try {
        const s = decide(req, claims, at, outdated[i]!);
        // Taken for the requests after it (a write that loses its race frees it again below).
        for (const w of s.writes) keep(claims, { ...w.fields, ip: w.ip, resourceVersion: "", uid: "" });
        staged.push([i, s]);
      } catch (error) {
        out[i] = { error };
      }
    });
    await Promise.all(
      staged.map(async ([i, s]) => {
        out[i] = await commit(reqs[i]!, s, claims).then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        );
      }),
    );
    for (const [i] of staged) {
      if (!isConflict(out[i]!.error)) continue;
      out[i] = await plan(reqs[i]!).then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
    }
    uncollected = claims;
    return out;
  };

  /** The view of the latest plan under the Lease, whose lapsed holds are still to be collected. */
  let uncollected: readonly Claim[] | undefined;

  /**
   * Deletes a few holds of other stacks that lapsed (see lapsed-holds.ts) among what the latest plan
   * saw, once that plan released the Lease: each delete is preconditioned on what was read, as the
   * CLI's collect is, so the Lease adds nothing but a wait for the planners queued behind it. This
   * stack's own are left to it: its next check renews them (a preview, then a late `up`) or its
   * pool's delete releases them. What cannot be collected now waits for a later plan.
   */
  const collectLapsed = async (): Promise<void> => {
    const claims = uncollected;
    uncollected = undefined;
    if (!claims) return;
    const lapsed = lapsedHolds(claims, Date.now(), planCollectsAfterMs)
      .filter((c) => !ofStack(c, me))
      .slice(0, collectPerPlan);
    if (lapsed.length > 0)
      await collectHolds(entries, lapsed, (c) => view.record(c.ip, undefined)).catch(() => undefined);
  };

  /** Deletes what `owner` holds among `ips` (all it holds when omitted) that `instance` wrote. */
  const releaseIps = async (owner: string, ips?: string[], instance?: string): Promise<void> => {
    const targets = ips ? await Promise.all(ips.map((ip) => store.read(ip))) : await store.list();
    // Another instance's claim (a replacement's, written after this one's) is not this one's to free.
    const own = (c: Claim | undefined): c is Claim => !!c && ownedBy(c, me, owner) && c.instance === instance;
    for (const c of targets) {
      if (!own(c)) continue;
      await retryOnConflict(`releasing ${c.ip} in ${what}`, async (n) => {
        const current = n === 1 ? c : await store.read(c.ip);
        if (own(current) && (await entries.remove(current))) view.record(current.ip, undefined);
      });
    }
  };

  /**
   * Turns `planned` into claims of `owner` (`instance`), one address after the other, recording in
   * `written` what each write found and left.
   * @throws IpamError IP_UNAVAILABLE naming the holder when another owner took an address (of this
   *   stack and `adopt`: taken over).
   */
  const claimEach = async (
    owner: string,
    planned: Plan,
    adopt: boolean,
    instance: string | undefined,
    written: Written[],
  ): Promise<void> => {
    const at = Date.now();
    for (const ip of planned.ips) {
      const c = await store.read(ip);
      view.record(ip, c);
      const foreign = c && !ownedBy(c, me, owner) && isLive(c, at);
      if (foreign && !(adopt && ofStack(c, me))) {
        throw new IpamError(
          "IP_UNAVAILABLE",
          `planned ${describeEntry(ip)} in ${what} was taken by ${who(c)} after it was planned ` +
            `(its hold lapsed); run the update again to plan another`,
        );
      }
      const takenFrom = c && !ownedBy(c, me, owner) ? holderKey(c, c.owner) : c?.takenFrom;
      const claim: ClaimFields = {
        state: "claim",
        stack: opts.stack,
        owner,
        seq: planned.seq,
        expires: 0,
      };
      if (me.stackId !== undefined) claim.stackId = me.stackId;
      if (instance !== undefined) claim.instance = instance;
      // Rewriting an own claim of an earlier version (no identity) is how it migrates.
      written.push({ before: c, after: await put(ip, c, takenFrom ? { ...claim, takenFrom } : claim, true) });
    }
  };

  /**
   * Refuses to claim `holds` (of `owner`) when the pool's stored definition is no longer the one
   * they were planned under: the owner changed the pool since (after they lapsed, or while the
   * check that planned them ran), and what it hands out may not include them.
   * @throws IpamError POOL_CHANGED naming the entries and the pool's owner.
   */
  const sameDefinition = async (owner: string, holds: readonly Claim[]): Promise<void> => {
    if (holds.length === 0) return;
    const stored = await definitions.read();
    const now = stored && definitionMark(stored.definition);
    const stale = holds.filter((c) => c.definition !== now);
    if (stale.length === 0) return;
    const by = stored ? `, which its owner ${ownerOf(stored)} changed since` : ", which is no longer defined";
    throw new IpamError(
      "POOL_CHANGED",
      `${stale.map((c) => describeEntry(c.ip)).join(", ")} in ${what} was planned for ${owner} under an ` +
        `earlier definition of the pool${by}; nothing was claimed: run the update again (pulumi preview ` +
        `shows the plan under the pool as it is now, pulumi up gets exactly it)`,
    );
  };

  /** Puts each claim object this process wrote back as it was before (deleted when there was none). */
  const undo = async (written: Written[]): Promise<void> => {
    for (const { before, after } of written.reverse()) {
      if (before === undefined) {
        if (await entries.remove(after)) view.record(after.ip, undefined);
        continue;
      }
      const {
        ip: _ip,
        resourceVersion: _rv,
        uid: _uid,
        created: _created,
        malformed: _m,
        ...fields
      } = before;
      view.record(after.ip, await store.replace(after, fields));
    }
  };

  /** Plans `req` alone, with the view again after each lost race. */
  const plan = (req: PlanRequest) =>
    retryOnConflict(`planning ${req.owner} in ${what}`, async () => {
      const claims = await claimsFor(req.pool);
      return commit(req, decide(req, claims, Date.now(), await outdatedOf(req, claims)), claims);
    });

  return {
    store,
    withPoolLock: locked,
    holdFields: hold,
    stack: opts.stack,
    me,
    what,
    // Requests of other stacks in this process (tests, tools) are planned as their own stack.
    plan: async (req) => {
      try {
        return await batched(poolKey, locked, {
          request: req,
          group: `${me.stack}\u0000${me.stackId ?? ""}`,
          runAll: planAll,
        });
      } finally {
        await collectLapsed();
      }
    },

    planAhead: async (requests) => {
      if (requests.length === 0) return;
      const outcomes = await locked(() =>
        planAll(
          requests,
          (req, claims) =>
            leftToItsOwnCheck(
              req,
              claims.some((c) => ownedBy(c, me, req.owner)),
            ) ||
            // One whose earlier hold was taken over: its own check plans it, and says so.
            claims.some((c) => tookFrom(c, me, req.owner)),
        ),
      );
      await collectLapsed();
      // Their own checks report why they failed; but an unreachable ledger fails this check too.
      const unreachable = outcomes.find((o) => (o.error as { code?: string })?.code === "LEDGER_UNAVAILABLE");
      if (unreachable) throw unreachable.error;
    },

    // No Lease, mostly: the Lease orders planning; a claim is a write preconditioned on what was read.
    reserve: (_pool, owner, planned, adopt, instance) =>
      retryOnConflict(`claiming ${planned.ips.join(", ")} for ${owner} in ${what}`, async () => {
        const written: Written[] = [];
        const attempt = async () => {
          await sameDefinition(owner, marked);
          await claimEach(owner, planned, Boolean(adopt), instance, written);
        };
        // Holds planned from the owner's stored definition are claimed only under that definition.
        // The owner changes it under the Lease, after listing the live holders: a hold that lapses
        // (or nearly) is not among them, so its claim is made under the Lease too.
        const found = await Promise.all(planned.ips.map((ip) => store.read(ip)));
        const marked = found.filter(
          (c): c is Claim => c?.state === "hold" && c.definition !== undefined && ownedBy(c, me, owner),
        );
        try {
          if (marked.some((c) => c.expires < Date.now() + lapseMargin)) await locked(attempt);
          else await attempt();
        } catch (e) {
          // Nothing half-claimed stays (a dual-stack pool whose second address went to another):
          // what this attempt wrote goes back to what it was, and the create fails whole.
          await undo(written).catch(() => undefined);
          throw e;
        }
      }),

    release: (_pool, owner, ips, instance) => releaseIps(owner, ips, instance),

    claimProblems: async (owner, ips, recent) => {
      const byIp = recent
        ? new Map((await recentList(poolKey, () => store.list())).map((c) => [c.ip, c]))
        : new Map(
            (await Promise.all(ips.map((ip) => store.read(ip)))).flatMap((c) =>
              c ? [[c.ip, c] as const] : [],
            ),
          );
      const problems: ClaimProblem[] = [];
      const at = Date.now();
      for (const ip of ips) {
        const c = byIp.get(ip);
        if (c && ownedBy(c, me, owner) && c.state === "claim") continue;
        if (c && isLive(c, at) && !ownedBy(c, me, owner)) {
          problems.push({ ip, kind: "foreign", message: `${ip} is claimed in ${what} by ${who(c)}` });
        } else {
          const found = c ? "only a hold" : "no claim";
          problems.push({
            ip,
            kind: "missing",
            message: `${ip} has ${found} in ${what}, so another stack could be handed it: pulumi up claims it again`,
          });
        }
      }
      return problems;
    },

    releaseHolds: async () => {
      const mine = (await store.list()).filter(
        (c) => c.state === "hold" && c.nodeId === undefined && c.malformed === undefined && ofStack(c, me),
      );
      for (const c of mine) {
        try {
          if (await entries.remove(c)) view.record(c.ip, undefined);
        } catch (e) {
          if (!isConflict(e)) throw e;
        }
      }
    },

    holders: async () => {
      const at = Date.now();
      const claims = (await store.list()).filter((c) => isLive(c, at));
      // A node address is shared: it is this stack's while a resource of this stack references it.
      const heldAs = (c: Claim) =>
        c.nodeId !== undefined && c.state === "claim"
          ? (nodeReferrer(c, me) ?? who(c))
          : ofStack(c, me) && c.state === "claim"
            ? c.owner
            : who(c);
      return new Map(claims.map((c) => [c.ip, heldAs(c)]));
    },
  };
}
