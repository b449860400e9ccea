import { AddressSet, IpamError } from "../../allocator";
import { poolRecords, type AllocationRecord } from "./allocation-record";
import type { Ledger, Plan, PlanRequest } from "../ledger";
import { heldPlan, leftToItsOwnCheck, planAddresses, type Held } from "../planner";
import { defaultLockTimings, inProcessLocker, withLock, type LockConfig } from "../locker";
import { forget, shared } from "../../core/process-registry";
import { exportStackResources, isStackMissing, type CheckpointResource } from "./stack-checkpoint";
import { anyTaken, entriesOverlap, entrySpan, freeEntry, isBlock, takeEntry } from "../held-entry";

/** Settings of {@link stackLedger}. */
export interface StackLedgerOptions {
  /** Fully qualified stack name, `<org>/<project>/<stack>`. */
  stack: string;
  /** Reads the stack's checkpoint; default `pulumi stack export`. Tests pass fabricated exports. */
  load?: (stack: string) => Promise<CheckpointResource[]>;
  /** Lock timings in milliseconds. */
  lock?: Pick<LockConfig, "lockDuration" | "lockAcquireTimeout">;
  /** Who is asking, for lock-timeout messages (e.g. `IpAllocation "web" create`). */
  holder?: string;
}

/** One pool's taken set in this process: the checkpoint's records plus this process's changes. */
class PoolBook {
  loaded = false;
  readonly taken = new AddressSet();
  /** Holder of every taken address. */
  readonly byIp = new Map<string, string>();
  /**
   * The owner each entry's record names, where it is not its holder: a resource renamed with an
   * alias is held under its URN in the checkpoint, but its record (and so its delete) still names
   * the URN it was planned under.
   */
  readonly namedBy = new Map<string, string>();
  /** Addresses of every holder. */
  readonly byOwner = new Map<string, Set<string>>();
  /** The highest `seq` among each holder's records. */
  readonly seqOf = new Map<string, number>();
  /** Plans made in this process, by owner, so a repeated plan returns the same addresses. */
  readonly plans = new Map<string, Plan>();
  maxSeq = 0;
  /** Addresses of the newest record (highest seq): the round-robin cursor. */
  latest: string[] = [];

  hold(ip: string, owner: string, seq: number, named = owner): void {
    const previous = this.byIp.get(ip);
    if (previous !== undefined && previous !== owner) this.byOwner.get(previous)?.delete(ip);
    this.byIp.set(ip, owner);
    if (named === owner) this.namedBy.delete(ip);
    else this.namedBy.set(ip, named);
    this.byOwner.set(owner, (this.byOwner.get(owner) ?? new Set()).add(ip));
    this.seqOf.set(owner, Math.max(seq, this.seqOf.get(owner) ?? 0));
    takeEntry(this.taken, ip);
    if (seq === 0) return;
    if (seq > this.maxSeq) {
      this.maxSeq = seq;
      this.latest = [ip];
    } else if (seq === this.maxSeq && !this.latest.includes(ip)) {
      this.latest.push(ip);
    }
  }

  free(ip: string): void {
    const owner = this.byIp.get(ip);
    if (owner !== undefined) this.byOwner.get(owner)?.delete(ip);
    this.byIp.delete(ip);
    this.namedBy.delete(ip);
    freeEntry(this.taken, ip);
    // Only one holder's entries overlap (a replacement's new block inside its old one): what the
    // freed entry covered of those stays taken.
    if (owner !== undefined) for (const other of this.byOwner.get(owner) ?? []) takeEntry(this.taken, other);
  }

  /**
   * Another holder of `ip` (an address or a block) than `owner`: of exactly that entry, else of any
   * entry overlapping it (`exact` false). Entries overlap rarely, so the scan only runs when the
   * taken set says some address of `ip` is held.
   */
  other(ip: string, owner: string): { holder: string; exact: boolean } | undefined {
    const holder = this.byIp.get(ip);
    if (holder !== undefined) return holder === owner ? undefined : { holder, exact: true };
    if (!anyTaken(this.taken, ip)) return undefined;
    const span = entrySpan(ip);
    for (const [entry, h] of this.byIp) {
      if (h !== owner && entriesOverlap(span, entrySpan(entry))) return { holder: h, exact: false };
    }
    return undefined;
  }

  conflict(ip: string, owner: string, pool: string, what: string, hint = ""): IpamError | undefined {
    const other = this.other(ip, owner);
    if (other === undefined) return undefined;
    const held = other.exact ? "is held by" : "overlaps what is held by";
    return new IpamError("IP_UNAVAILABLE", `${what} ${ip} in pool ${pool} ${held} ${other.holder}${hint}`);
  }

  /** The owner's addresses with their `seq`. */
  held(owner: string): Held[] {
    return [...(this.byOwner.get(owner) ?? [])].map((ip) => ({ ip, seq: this.seqOf.get(owner) ?? 0 }));
  }

  /**
   * Plans `req` unless its owner planned in this process already or holds what it asks for (see
   * {@link heldPlan}), with the rules every ledger shares ({@link planAddresses}).
   * @throws IpamError IP_UNAVAILABLE when a requested address is held by another owner (unless
   *   adopted), and whatever the chooser throws.
   */
  plan(req: PlanRequest): Plan {
    const previous = this.plans.get(req.owner) ?? heldPlan(req, this.held(req.owner));
    if (previous) {
      this.plans.set(req.owner, previous);
      return previous;
    }
    const plan = planAddresses(req, {
      what: `pool ${req.pool}`,
      taken: this.taken,
      latest: this.latest,
      maxSeq: this.maxSeq,
      otherHolder: (ip, owner) => {
        const other = this.other(ip, owner);
        return other && { name: other.holder, adoptable: other.exact, overlaps: !other.exact };
      },
    });
    for (const ip of plan.ips) this.hold(ip, req.owner, plan.seq);
    this.plans.set(req.owner, plan);
    return plan;
  }
}

// One export per stack per process, shared by all pools; a failed export is retried next time.
function cachedExport(stack: string, load: (stack: string) => Promise<CheckpointResource[]>) {
  return shared("stack-export", stack, () => {
    const p = load(stack);
    p.catch(() => forget("stack-export", stack));
    return p;
  });
}

/** The resources of the stack's checkpoint, as the stack ledger reads them (one export per stack per process). */
export function stackResources(stack: string): Promise<CheckpointResource[]> {
  return cachedExport(stack, (s) => exportStackResources(s));
}

/**
 * The records of `pool` in the stack's checkpoint, as the stack ledger reads them (one export per
 * stack per process): what a shared pool's planning counts as this stack's own besides its claims.
 */
export function stateRecords(stack: string, pool: string): Promise<AllocationRecord[]> {
  // The export is read once per process, so are a pool's records in it: every plan of the pool
  // asks, and the stack may hold thousands of resources.
  const key = `${stack}\u0000${pool}`;
  return shared("state-records", key, () => {
    const records = stackResources(stack).then((rs) => poolRecords(rs, pool));
    records.catch(() => forget("state-records", key));
    return records;
  });
}

/**
 * The default ledger: the stack's own Pulumi state. The first operation on a pool in this process
 * rebuilds its taken set from the stack's checkpoint (every record of the pool, including
 * resources pending deletion or replacement and interrupted creates); afterwards this process's
 * plans, reservations and releases keep it current. Operations on one pool are serialized by the
 * stack-scoped in-process lock `<org>/<project>/<stack>/<pool>`.
 *
 * The round-robin cursor is the addresses of the record with the highest `seq`, so it carries over
 * to the next deployment. Requested addresses do not move it (unlike host-local): a holder whose
 * requested address comes from another resource cannot be known to the other holders' plans. It
 * cannot cover one case: when the most recent allocations are deleted, their records leave state
 * and the next deployment resumes after the newest surviving record, so addresses released after
 * it may be handed out again before the rest of the pool has been used.
 */
export function stackLedger(opts: StackLedgerOptions): Ledger {
  const load = opts.load ?? ((stack: string) => exportStackResources(stack));
  const timings = opts.lock ?? defaultLockTimings;
  const holder = opts.holder ?? "an operation";

  const locked = async <T>(pool: string, fn: (b: PoolBook) => T): Promise<T> => {
    const id = `${opts.stack}/${pool}`;
    const locker = inProcessLocker({ id, namespace: "", ...timings }, holder);
    return withLock(locker, async () => {
      const b = shared("pool-book", id, () => new PoolBook());
      if (!b.loaded) {
        for (const r of poolRecords(await cachedExport(opts.stack, load), pool)) {
          for (const ip of r.ips) b.hold(ip, r.owner, r.seq, r.named);
        }
        b.loaded = true;
      }
      return fn(b);
    });
  };

  return {
    plan: (req: PlanRequest) => locked(req.pool, (b) => b.plan(req)),

    planAhead: async (requests) => {
      if (requests.length === 0) return;
      await locked(requests[0]!.pool, (b) => {
        for (const req of requests) {
          if (leftToItsOwnCheck(req, (b.byOwner.get(req.owner)?.size ?? 0) > 0)) continue;
          try {
            b.plan(req);
          } catch {
            // Its own check reports why; the holders after it are planned as the engine would.
          }
        }
      });
    },

    reserve: (pool, owner, plan, adopt) =>
      locked(pool, (b) => {
        for (const ip of plan.ips) {
          // `adopt` takes over an entry exactly as another holds it, never part of another's block.
          if (adopt && b.other(ip, owner)?.exact !== false) continue;
          const hint = "; it was taken after it was planned: run the update again to plan another";
          const err = b.conflict(ip, owner, pool, isBlock(ip) ? "planned block" : "planned address", hint);
          if (err) throw err;
        }
        for (const ip of plan.ips) b.hold(ip, owner, plan.seq);
        b.plans.set(owner, plan);
      }),

    // The checkpoint still lists a holder being deleted: its addresses are freed in this process's
    // book. A stack renamed since the holder recorded its name has no checkpoint under that name,
    // and nothing of it to free here (a new deployment reads the state under the new name).
    // `owner` is the name the holder's record gives, which a rename with an alias keeps: of the
    // addresses it lists, those held under that name, or recorded with it, are its own (a new
    // resource given the old name holds other addresses, so a name two holders share frees only
    // what the deleted one listed).
    release: async (pool, owner, ips) => {
      await locked(pool, (b) => {
        const targets = ips ?? [...(b.byOwner.get(owner) ?? [])];
        for (const ip of targets)
          if (b.byIp.get(ip) === owner || (ips !== undefined && b.namedBy.get(ip) === owner)) b.free(ip);
        b.plans.delete(owner);
      }).catch((e: unknown) => {
        if (!isStackMissing(e)) throw e;
      });
    },

    holders: (pool) => locked(pool, (b) => new Map(b.byIp)),
  };
}
