import type { ReadonlyAddressSet } from "./address-set";

/**
 * What the allocator needs from wherever reservations live (host-local's backend.Store, made async).
 * Addresses cross this boundary as canonical strings. Range ids are strings: the allocator passes its
 * numeric range id through `String()`, as host-local uses `strconv.Itoa`.
 *
 * `reserve` is the only step that must be atomic: the allocator chooses an address from `reserved()`
 * and then reserves it, and simply chooses again if another caller won the race.
 */
export interface Store {
  /**
   * Records that `id` holds `ip` and remembers `ip` as the last reserved address of `rangeId`.
   * Returns false (and changes nothing) when `ip` is already held by anyone.
   */
  reserve(id: string, ip: string, rangeId: string): Promise<boolean>;
  /** The address most recently reserved for `rangeId`, or undefined when none was. */
  lastReservedIP(rangeId: string): Promise<string | undefined>;
  /** Frees every address `id` holds. Unknown ids are not an error. */
  releaseByID(id: string): Promise<void>;
  /** Every address `id` holds, in any range. */
  getByID(id: string): Promise<string[]>;
  /**
   * An ordered view of every held address, for O(log n) next-free search. It may be a live view;
   * the allocator reads it before each reservation and never writes it.
   */
  reserved(): Promise<ReadonlyAddressSet>;
}

/**
 * An optional synchronous face for stores whose state lives in this process ({@link MemoryStore}
 * has one). When a store offers it, the allocator calls these instead of the async methods and so
 * skips a promise round trip per store call; the meaning of each method is exactly that of its async
 * twin. Stores backed by I/O simply do not implement it.
 */
export interface SyncStore {
  /** As {@link Store.reserve}. */
  reserveSync(id: string, ip: string, rangeId: string): boolean;
  /** As {@link Store.lastReservedIP}. */
  lastReservedIPSync(rangeId: string): string | undefined;
  /** As {@link Store.getByID}. */
  getByIDSync(id: string): string[];
  /** As {@link Store.reserved}. */
  reservedSync(): ReadonlyAddressSet;
}

/** The store's synchronous face, when it has one. */
export function syncFace(store: Store): SyncStore | undefined {
  const s = store as Store & Partial<SyncStore>;
  return typeof s.reserveSync === "function" &&
    typeof s.lastReservedIPSync === "function" &&
    typeof s.getByIDSync === "function" &&
    typeof s.reservedSync === "function"
    ? (s as SyncStore)
    : undefined;
}
