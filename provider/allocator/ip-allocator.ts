import { formatAddress, parseAddress } from "./address";
import { IntervalSet } from "./interval-set";
import { IpamError } from "../core/ipam-error";
import { type AllocationStrategy, checkStrategy, PoolLayout } from "./pool-layout";
import type { RangeSet } from "./range-set";
import { resolveRange } from "./range";
import { type Store, type SyncStore, syncFace } from "./store";

/** Options of {@link IpAllocator}. */
export interface IpAllocatorOptions {
  /** Default `round-robin` (host-local). */
  strategy?: AllocationStrategy;
  /**
   * CIDRs or single addresses never handed out nor accepted as requests. Entries of the other family
   * or outside the set are ignored; coverage is not checked here, so exclusions that cover the whole
   * pool surface as POOL_EXHAUSTED at `get`.
   */
  exclude?: readonly string[];
}

/** What {@link IpAllocator.get} returns. */
export interface Allocation {
  /** The address with its subnet's prefix length, e.g. `10.0.0.2/29`. */
  address: string;
  /** The gateway of the range the address came from. */
  gateway: string;
}

/**
 * host-local's IPAllocator over any {@link Store}: hands out one address per id from a range set,
 * round-robin by default, never a gateway or an excluded address. The range set is canonicalized in
 * place at construction and read once; later changes to it are not seen.
 *
 * Concurrent `get` calls for different ids are safe: the store's `reserve` is the atomic step and a
 * lost race just moves on to the next free address. The duplicate check for one id is not atomic
 * with its reservation, so callers serialize calls for the same id (the resources layer holds a
 * lock per pool anyway).
 */
export class IpAllocator {
  readonly #store: Store;
  readonly #sync: SyncStore | undefined;
  readonly #rangeId: string;
  readonly #strategy: AllocationStrategy;
  readonly #layout: PoolLayout;
  readonly #prefix: string[];
  readonly #gateway: string[];
  // The address this allocator reserved last, so the next round-robin cursor needs no parsing.
  #lastIp: string | undefined;
  #lastValue = 0n;

  /**
   * @param rangeId - this set's index in its config; the store keeps the last reserved address per id.
   * @throws IpamError any range-set canonicalize error; INVALID_CONFIG for an unknown strategy or a
   *   range id that is not a non-negative integer; INVALID_ADDRESS / HOST_BITS_SET for an exclusion
   *   that cannot be parsed.
   */
  constructor(rangeSet: RangeSet, store: Store, rangeId: number, options: IpAllocatorOptions = {}) {
    if (!Number.isSafeInteger(rangeId) || rangeId < 0) {
      throw new IpamError("INVALID_CONFIG", `range id ${String(rangeId)} is not a non-negative integer`);
    }
    this.#store = store;
    this.#sync = syncFace(store);
    this.#rangeId = String(rangeId);
    this.#strategy = checkStrategy(options.strategy);
    this.#layout = PoolLayout.forRangeSet(rangeSet, options.exclude);
    const resolved = rangeSet.ranges.map(resolveRange);
    this.#prefix = resolved.map((r) => `/${r.prefixLength}`);
    this.#gateway = resolved.map((r) => r.text.gateway);
  }

  /**
   * Reserves an address for `id`: `requestedIp` if given, otherwise the next one by the strategy.
   * Either way the store remembers it as the round-robin cursor.
   *
   * @throws IpamError NOT_IN_RANGE when `requestedIp` is outside the set (or of the other family);
   *   IP_UNAVAILABLE when it is a gateway, excluded or held; DUPLICATE_ALLOCATION when `id` already
   *   holds an address in this set; POOL_EXHAUSTED naming the set when nothing is free;
   *   INVALID_ADDRESS when `requestedIp` is not an address.
   */
  async get(id: string, requestedIp?: string): Promise<Allocation> {
    const layout = this.#layout;
    const store = this.#store;
    // An in-process store answers synchronously: same calls, no promise round trips.
    const sync = this.#sync;
    if (requestedIp !== undefined) {
      const { family, value } = parseAddress(requestedIp, "requested IP");
      const ip = formatAddress(family, value);
      const segment = family === layout.family ? layout.segmentOf(value) : -1;
      if (segment < 0) throw new IpamError("NOT_IN_RANGE", `requested IP ${ip} is not in ${layout.label}`);
      if (layout.blocked.has(value)) {
        const why = ip === this.#gateway[segment] ? "is the gateway of its range" : "is excluded";
        throw new IpamError("IP_UNAVAILABLE", `requested IP ${ip} ${why} in ${layout.label}`);
      }
      this.#refuseDuplicate(id, sync ? sync.getByIDSync(id) : await store.getByID(id));
      const reserved = sync
        ? sync.reserveSync(id, ip, this.#rangeId)
        : await store.reserve(id, ip, this.#rangeId);
      if (!reserved) {
        throw new IpamError("IP_UNAVAILABLE", `requested IP ${ip} is already allocated in ${layout.label}`);
      }
      return this.#allocation(segment, ip);
    }

    this.#refuseDuplicate(id, sync ? sync.getByIDSync(id) : await store.getByID(id));
    let cursor: bigint | undefined;
    if (this.#strategy === "round-robin") {
      const last = sync ? sync.lastReservedIPSync(this.#rangeId) : await store.lastReservedIP(this.#rangeId);
      if (last !== undefined) cursor = this.#cursorValue(last);
    }
    const taken = (sync ? sync.reservedSync() : await store.reserved()).intervalsOf(layout.family);
    // Addresses the store refused although its view showed them free (another caller won the race).
    let lost: IntervalSet | undefined;
    for (;;) {
      const found = layout.find(taken, cursor, this.#strategy, lost);
      if (found === undefined) throw layout.exhausted();
      const ip = formatAddress(layout.family, found.value);
      if (sync ? sync.reserveSync(id, ip, this.#rangeId) : await store.reserve(id, ip, this.#rangeId)) {
        this.#lastIp = ip;
        this.#lastValue = found.value;
        return this.#allocation(found.segment, ip);
      }
      (lost ??= new IntervalSet()).add(found.value);
    }
  }

  /** Frees every address `id` holds in the store (host-local releases by id). Unknown ids are fine. */
  async release(id: string): Promise<void> {
    await this.#store.releaseByID(id);
  }

  #refuseDuplicate(id: string, holdings: readonly string[]): void {
    for (const held of holdings) {
      const { family, value } = parseAddress(held, "held address");
      if (family === this.#layout.family && this.#layout.segmentOf(value) >= 0) {
        throw new IpamError(
          "DUPLICATE_ALLOCATION",
          `${id} already holds ${held} in ${this.#layout.label}; release it before allocating again`,
        );
      }
    }
  }

  #cursorValue(last: string): bigint | undefined {
    if (last === this.#lastIp) return this.#lastValue;
    const parsed = parseAddress(last, "last reserved IP");
    return parsed.family === this.#layout.family ? parsed.value : undefined;
  }

  #allocation(segment: number, ip: string): Allocation {
    return { address: ip + (this.#prefix[segment] ?? ""), gateway: this.#gateway[segment] ?? "" };
  }
}
