import type { ReadonlyAddressSet } from "../allocator";

/**
 * Chooses the `index`-th address of a plan given what is taken (earlier picks of the plan included)
 * and the round-robin cursor: the addresses of the newest allocation, in the order they were
 * planned (a multi-family pool picks, per family, the last one of its own family).
 */
export type Chooser = (taken: ReadonlyAddressSet, latest: readonly string[], index: number) => string;

/** A request to plan addresses for one holder. */
export interface PlanRequest {
  /** Pool identity. */
  pool: string;
  /** Holder identity. */
  owner: string;
  /** Specific addresses to hold; when absent, `count` addresses are chosen. */
  requested?: string[];
  /** How many addresses to choose when none are requested (default 1). */
  count?: number;
  /**
   * A block request's prefix length: what the owner holds counts as its plan only when it is a
   * block of this length (without it, only addresses count), so a holder asking for a new length
   * gets a new block while its old one is still held.
   */
  prefixLength?: number;
  /**
   * The one family of a multi-family pool the request is for: what the owner holds counts as its
   * plan only when it is of this family, so a holder asking for another family gets a new address.
   */
  family?: "ipv4" | "ipv6";
  /** Picks the next address; called once per address, with the previous picks already taken. */
  choose: Chooser;
  /** Take the requested addresses over from whoever holds them (renames, imports of existing IPs). */
  adopt?: boolean;
  /**
   * Why the pool as it is now (and what is seen in use outside Pulumi) would not plan `entry` for
   * this request; undefined when it would. A ledger whose holds outlive a process asks it of each
   * hold of the owner before renewing it: a hold planned under an earlier definition of the pool
   * is not renewed into an address the pool no longer hands out.
   */
  refuses?: (entry: string) => Promise<string | undefined>;
  /**
   * The canonical definition the request's pool was read from, where it is another stack's shared
   * pool (a reference): the holds it writes record it, and are claimed only while the pool's
   * definition is still that one (the owner changes it under the pool's lock).
   */
  definition?: string;
}

/** Planned addresses and their place in the pool's allocation order. */
export interface Plan {
  ips: string[];
  seq: number;
}

/**
 * Where a pool's allocations are agreed. Every method runs under the pool's lock; the slow work
 * (provisioning) happens between `plan`/`reserve` and `release` without it.
 *
 * The default is the stack's own Pulumi state ({@link stackLedger}); pools shared across stacks
 * plug in another implementation (a Kubernetes ledger) behind the same interface.
 */
export interface Ledger {
  /**
   * Plans addresses for `owner` and holds them tentatively for the rest of this process, so two
   * holders planned in one deployment never get the same address. Planning again for an owner
   * that already planned in this process returns the same plan; an owner that already holds what
   * it asks for in the pool (e.g. from the record of an interrupted create) gets that.
   * @throws IpamError IP_UNAVAILABLE when a requested address is held by another owner;
   *   POOL_EXHAUSTED (from the chooser); POOL_CHANGED when a hold the owner had is one the pool no
   *   longer hands out (see {@link PlanRequest.refuses}), or one that cannot be registered because
   *   another holder's block was claimed around it (its writer crashed before registering it);
   *   LEDGER_UNAVAILABLE; LOCK_TIMEOUT.
   */
  plan(req: PlanRequest): Promise<Plan>;
  /**
   * Plans every request in the given order, as {@link plan} does. A request that cannot be
   * planned (a requested address held by another owner, an exhausted pool) is skipped: its own
   * `plan` reports it. All requests are for one pool.
   *
   * The engine checks resources in the order their registrations arrive, which differs from run to
   * run; a holder's check plans every earlier holder of the pool (in program order) this way first,
   * so every check, in preview and in `up`, makes the same plans whatever order they arrive in.
   */
  planAhead(requests: readonly PlanRequest[]): Promise<void>;
  /**
   * Makes `ips` held by `owner`: exactly these, never substitutes. With `adopt`, addresses held by
   * another owner are taken over. `instance` names the resource instance that reserves them (a
   * replacement is another instance of the same owner); a ledger that records it frees them only for
   * that instance.
   * @throws IpamError IP_UNAVAILABLE naming the address and its holder when another owner holds one.
   */
  reserve(pool: string, owner: string, plan: Plan, adopt?: boolean, instance?: string): Promise<void>;
  /**
   * Frees what `owner` holds among `ips` (all it holds when omitted) and `instance` reserved;
   * unknown addresses, and those a later instance of the owner reserved since, are left alone.
   */
  release(pool: string, owner: string, ips?: string[], instance?: string): Promise<void>;
  /** Current holder of every taken address in the pool. */
  holders(pool: string): Promise<ReadonlyMap<string, string>>;
}
