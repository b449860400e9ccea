import { AddressSet, IpamError } from "../allocator";
import { poolRecords } from "./allocation-record";
import type { Ledger, Plan, PlanRequest } from "./ledger";
import { defaultLockTimings, inProcessLocker, withLock, type LockConfig } from "./locker";
import { forget, shared } from "./process-registry";
import { exportStackResources, type CheckpointResource } from "./stack-checkpoint";

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

interface Holding {
  owner: string;
  seq: number;
}

/** One pool's taken set in this process: the checkpoint's records plus this process's changes. */
class PoolBook {
  loaded = false;
  readonly taken = new AddressSet();
  readonly byIp = new Map<string, Holding>();
  /** Plans made in this process, by owner, so a repeated plan returns the same addresses. */
  readonly plans = new Map<string, Plan>();
  maxSeq = 0;
  /** Addresses of the newest record (highest seq): the round-robin cursor. */
  latest: string[] = [];

  hold(ip: string, owner: string, seq: number): void {
    this.byIp.set(ip, { owner, seq });
    this.taken.add(ip);
    if (seq > this.maxSeq) {
      this.maxSeq = seq;
      this.latest = [ip];
    } else if (seq === this.maxSeq && !this.latest.includes(ip)) {
      this.latest.push(ip);
    }
  }

  free(ip: string): void {
    this.byIp.delete(ip);
    this.taken.delete(ip);
  }

  conflict(ip: string, owner: string, pool: string, what: string, hint = ""): IpamError | undefined {
    const h = this.byIp.get(ip);
    if (!h || h.owner === owner) return undefined;
    return new IpamError("IP_UNAVAILABLE", `${what} ${ip} in pool ${pool} is held by ${h.owner}${hint}`);
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

/**
 * The default ledger: the stack's own Pulumi state. The first operation on a pool in this process
 * rebuilds its taken set from the stack's checkpoint (every record of the pool, including
 * resources pending deletion or replacement and interrupted creates); afterwards this process's
 * plans, reservations and releases keep it current. Operations on one pool are serialized by the
 * stack-scoped in-process lock `<org>/<project>/<stack>/<pool>`.
 *
 * The round-robin cursor is the addresses of the record with the highest `seq`, so it carries over
 * to the next deployment. It cannot cover one case: when the most recent allocations are deleted,
 * their records leave state and the next deployment resumes after the newest surviving record, so
 * addresses released after it may be handed out again before the rest of the pool has been used.
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
          for (const ip of r.ips) b.hold(ip, r.owner, r.seq);
        }
        b.loaded = true;
      }
      return fn(b);
    });
  };

  return {
    plan: (req: PlanRequest) =>
      locked(req.pool, (b) => {
        const previous = b.plans.get(req.owner);
        if (previous) return previous;
        for (const ip of req.adopt ? [] : (req.requested ?? [])) {
          const err = b.conflict(
            ip,
            req.owner,
            req.pool,
            "requested address",
            "; set adopt: true to take it over",
          );
          if (err) throw err;
        }
        const seq = b.maxSeq + 1;
        const ips: string[] = [];
        const count = req.requested ? req.requested.length : (req.count ?? 1);
        for (let i = 0; i < count; i++) {
          const ip = req.requested ? req.requested[i]! : req.choose(b.taken, b.latest, i);
          b.hold(ip, req.owner, seq);
          ips.push(ip);
        }
        const plan = { ips, seq };
        b.plans.set(req.owner, plan);
        return plan;
      }),

    reserve: (pool, owner, plan, adopt) =>
      locked(pool, (b) => {
        for (const ip of adopt ? [] : plan.ips) {
          const hint = "; it was taken after it was planned: run the update again to plan another";
          const err = b.conflict(ip, owner, pool, "planned address", hint);
          if (err) throw err;
        }
        for (const ip of plan.ips) b.hold(ip, owner, plan.seq);
        b.plans.set(owner, plan);
      }),

    release: (pool, owner, ips) =>
      locked(pool, (b) => {
        const targets = ips ?? [...b.byIp].filter(([, h]) => h.owner === owner).map(([ip]) => ip);
        for (const ip of targets) if (b.byIp.get(ip)?.owner === owner) b.free(ip);
        b.plans.delete(owner);
      }),

    holders: (pool) => locked(pool, (b) => new Map([...b.byIp].map(([ip, h]) => [ip, h.owner]))),
  };
}
