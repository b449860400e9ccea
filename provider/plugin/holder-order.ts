import { IpamError } from "../core/ipam-error";

/**
 * The order in which a plugin program's new holders of one pool take their addresses, so that
 * `preview` shows what `up` assigns whatever order the engine checks them in.
 *
 * A TypeScript program sends each holder the pool's queue (every holder before it, in program
 * order). A YAML, Python or Go program cannot, and the engine checks resources one at a time in the
 * order their registrations arrive, which is not the program's order when they wait on the same
 * pool. But a resource that refers to another (`after`, an EgressIp's allocations following each
 * other) registers, and so is checked, only once the other's registration is complete: those
 * references are an order every run keeps. The rule:
 *
 * - Holders already in the stack keep their addresses and take no plan, but their references count.
 * - The holders new to a pool in one deployment must be ordered by references: each new holder
 *   refers, directly or through the resources it refers to (new or existing, of any pool), to the
 *   new holder of the pool checked just before it.
 * - A new holder that does not is refused at preview, naming the other: the two could arrive in
 *   either order, and whichever the engine checks second, the preview fails, so no plan ever
 *   depends on the order of arrival.
 *
 * The new holders of a pool are then planned in the same order in every deployment, and the planner
 * remembers the plans of one process: each new holder's address is the same at preview and at up.
 * One book per provider process (one deployment).
 */
export class HolderOrder {
  /** The last new holder of each pool checked in this process. */
  private readonly last = new Map<string, string>();
  /** The new holders checked in this process, each with its pool. */
  private readonly fresh = new Map<string, string>();
  /** The resources each resource checked in this process refers to, by URN. */
  private readonly refs = new Map<string, readonly string[]>();
  /** The new holders whose plan waits for up (their check knew too little at preview), each with its pool. */
  private readonly waiting = new Map<string, string>();

  /**
   * Records that `urn`, checked now, refers to the resources `to` (URNs): the engine completed their
   * registrations before `urn`'s began. Call it for every resource checked, before {@link next}.
   */
  refers(urn: string, to: Iterable<string>): void {
    this.refs.set(urn, [...to]);
  }

  /**
   * Records that `holder`, new to `pool`, plans now, after `after` (the URN its `after` names, or
   * undefined; only for the message: the order is what {@link refers} recorded).
   * @throws IpamError INVALID_CONFIG naming the holder it would race when nothing orders it after
   * the new holder of the pool checked before it.
   */
  next(pool: string, holder: string, after: string | undefined): void {
    if (this.fresh.get(holder) === pool) return; // checked again (a replacement's second check)
    const last = this.last.get(pool);
    if (last !== undefined && !this.reaches(holder, last)) {
      const afterNew = after !== undefined && this.fresh.get(after) === pool;
      const wanted = afterNew
        ? `${name(after)} is followed by ${name(last)} already`
        : `${name(last)} is new too`;
      throw new IpamError(
        "INVALID_CONFIG",
        `${name(holder)} and ${name(last)} both take a new address from pool ${name(pool)} in this update, and ` +
          `nothing orders them (${wanted}): the engine checks them in the order their registrations arrive, ` +
          `so preview and up could give them different addresses. Set after: ${name(last)} on ${name(holder)} ` +
          `(each new holder names the one before it, or a holder or EgressIp that follows it; for an ` +
          `EgressIp's address, set after on the EgressIp)`,
      );
    }
    this.last.set(pool, holder);
    this.fresh.set(holder, pool);
  }

  /**
   * Records that new `holder` of `pool` was not planned at its check (a value it plans with, such
   * as an `observeWith` from an output, is not known at preview): up plans it.
   */
  waits(pool: string, holder: string): void {
    this.waiting.set(holder, pool);
  }

  /**
   * A new holder of `pool` checked before `holder` whose plan waits for up, or undefined. Every new
   * holder of a pool comes after those checked before it ({@link next}), so one that waits takes at
   * up an address `holder` would be shown at preview: `holder` is not planned at preview either
   * (as a TypeScript program's queue does with an earlier holder not known yet).
   */
  waitingAhead(pool: string, holder: string): string | undefined {
    for (const [h, p] of this.waiting) if (p === pool && h !== holder) return h;
    return undefined;
  }

  /** Whether `from` refers to `to`, directly or through the resources it refers to. */
  private reaches(from: string, to: string): boolean {
    const seen = new Set<string>();
    const todo = [from];
    for (let urn = todo.pop(); urn !== undefined; urn = todo.pop()) {
      if (urn === to) return true;
      if (seen.has(urn)) continue;
      seen.add(urn);
      todo.push(...(this.refs.get(urn) ?? []));
    }
    return false;
  }
}

/** The resource name of a URN, for messages. */
const name = (urn: string): string => urn.split("::").at(-1) ?? urn;
