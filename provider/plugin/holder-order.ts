import { IpamError } from "../core/ipam-error";

/**
 * The order in which a plugin program's new holders of one pool take their addresses, so that
 * `preview` shows what `up` assigns whatever order the engine checks them in.
 *
 * A TypeScript program sends each holder the pool's queue (every holder before it, in program
 * order). A YAML, Python or Go program cannot, and the engine checks resources one at a time in the
 * order their registrations arrive, which is not the program's order when they wait on the same
 * pool. So the order is made explicit: a new holder names the one before it with `after`, whose
 * registration, and so whose check, the engine then completes first. The rule:
 *
 * - Holders already in the stack keep their addresses and take no part in the order.
 * - The holders new to a pool in one deployment form one chain: the first has no `after` or an
 *   existing holder as `after`; each next one names the one checked just before it.
 * - A new holder that breaks the chain (a second first one, or two naming the same one) is refused
 *   at preview, naming the other: whichever the engine checks second, the preview fails, so no
 *   plan ever depends on the order of arrival.
 *
 * Every plan of the chain then runs in the chain's order in every deployment, and the planner
 * remembers the plans of one process: each new holder's address is the same at preview and at up.
 * One book per provider process (one deployment).
 */
export class HolderOrder {
  /** The last new holder of each pool checked in this process. */
  private readonly last = new Map<string, string>();
  /** The new holders checked in this process, each with its pool. */
  private readonly fresh = new Map<string, string>();

  /**
   * Records that `holder`, new to `pool`, plans now, after `after` (a URN, or undefined).
   * @throws IpamError INVALID_CONFIG naming the holder it would race when it breaks the chain.
   */
  next(pool: string, holder: string, after: string | undefined): void {
    if (this.fresh.get(holder) === pool) return; // checked again (a replacement's second check)
    const last = this.last.get(pool);
    const afterNew = after !== undefined && this.fresh.get(after) === pool;
    if (last !== undefined && after !== last) {
      const wanted = afterNew
        ? `${name(after)} is followed by ${name(last)} already`
        : `${name(last)} is new too`;
      throw new IpamError(
        "INVALID_CONFIG",
        `${name(holder)} and ${name(last)} both take a new address from pool ${name(pool)} in this update, and ` +
          `nothing orders them (${wanted}): the engine checks them in the order their registrations arrive, ` +
          `so preview and up could give them different addresses. Set after: ${name(last)} on ${name(holder)} ` +
          `(each new holder names the one before it; for an EgressIp's address, set after on the EgressIp)`,
      );
    }
    this.last.set(pool, holder);
    this.fresh.set(holder, pool);
  }
}

/** The resource name of a URN, for messages. */
const name = (urn: string): string => urn.split("::").at(-1) ?? urn;
