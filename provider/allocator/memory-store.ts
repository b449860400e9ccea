import { formatAddress, parseAddress } from "./address";
import { AddressSet, type ReadonlyAddressSet } from "./address-set";
import type { Store, SyncStore } from "./store";

/** Initial contents of a {@link MemoryStore}, and what {@link MemoryStore.snapshot} returns. */
export interface MemoryStoreSeed {
  /** Held addresses: address → owner id. */
  reservations?: { [ip: string]: string };
  /** Last reserved address per range id. */
  lastReserved?: { [rangeId: string]: string };
}

/**
 * The in-memory {@link Store}: host-local's store semantics (one owner per address, a last-reserved
 * address per range id, release by owner) with an ordered interval view of held addresses, so finding
 * the next free address stays O(log n). Keys are canonical, so `::ffff:10.0.0.1` and `10.0.0.1` are
 * the same address. It also has the synchronous face ({@link SyncStore}) the allocator prefers.
 */
export class MemoryStore implements Store, SyncStore {
  /** Addresses per owner: a bare string for the usual single address, a list beyond that. */
  readonly #held = new Map<string, string | string[]>();
  readonly #last = new Map<string, string>();
  // Whether an address is held is answered by the interval view alone: no per-address map to grow.
  readonly #reserved = new AddressSet();
  // An id that getByID just found holding nothing: the allocator's reserve() for it follows at once,
  // and knowing it is absent saves a second lookup in a map as large as the pool. Any reservation
  // clears it, so it can never be stale.
  #absent: string | undefined;

  /** @throws IpamError INVALID_ADDRESS when the seed holds a non-address. */
  constructor(seed: MemoryStoreSeed = {}) {
    for (const [ip, id] of Object.entries(seed.reservations ?? {})) this.#take(id, ip);
    for (const [rangeId, ip] of Object.entries(seed.lastReserved ?? {})) {
      this.#last.set(rangeId, canonical(ip));
    }
  }

  /**
   * Records `id` as the owner of `ip` and `ip` as the last reserved address of `rangeId`; false when
   * `ip` is already held. @throws IpamError INVALID_ADDRESS when `ip` is not an address.
   */
  async reserve(id: string, ip: string, rangeId: string): Promise<boolean> {
    return this.reserveSync(id, ip, rangeId);
  }

  /** The address last reserved for `rangeId`, canonical, or undefined. */
  async lastReservedIP(rangeId: string): Promise<string | undefined> {
    return this.lastReservedIPSync(rangeId);
  }

  /** Frees everything `id` holds; unknown ids are fine. */
  async releaseByID(id: string): Promise<void> {
    for (const key of this.#heldBy(id)) this.#reserved.delete(key);
    this.#held.delete(id);
  }

  /** A fresh list of what `id` holds, in reservation order. */
  async getByID(id: string): Promise<string[]> {
    return this.getByIDSync(id);
  }

  /** The live ordered view of every held address. */
  async reserved(): Promise<ReadonlyAddressSet> {
    return this.#reserved;
  }

  /** {@inheritDoc MemoryStore.reserve} */
  reserveSync(id: string, ip: string, rangeId: string): boolean {
    const key = this.#take(id, ip);
    if (key === undefined) return false;
    this.#last.set(String(rangeId), key);
    return true;
  }

  /** {@inheritDoc MemoryStore.lastReservedIP} */
  lastReservedIPSync(rangeId: string): string | undefined {
    return this.#last.get(String(rangeId));
  }

  /** {@inheritDoc MemoryStore.getByID} */
  getByIDSync(id: string): string[] {
    return this.#heldBy(id);
  }

  /** {@inheritDoc MemoryStore.reserved} */
  reservedSync(): ReadonlyAddressSet {
    return this.#reserved;
  }

  /** The whole contents as plain strings, suitable for state and for a new store's seed. */
  snapshot(): Required<MemoryStoreSeed> {
    const reservations: { [ip: string]: string } = {};
    for (const id of this.#held.keys()) for (const ip of this.#heldBy(id)) reservations[ip] = id;
    return { reservations, lastReserved: Object.fromEntries(this.#last) };
  }

  /** A fresh list of the addresses `id` holds. */
  #heldBy(id: string): string[] {
    const held = this.#held.get(id);
    if (held === undefined) this.#absent = id;
    return held === undefined ? [] : typeof held === "string" ? [held] : [...held];
  }

  /** Records `id` as owner of `ip`; returns the canonical key, or undefined when already held. */
  #take(id: string, ip: string): string | undefined {
    const { family, value } = parseAddress(ip);
    if (!this.#reserved.addValue(family, value)) return undefined;
    const key = canonicalText(ip, family, value);
    const held = id === this.#absent ? undefined : this.#held.get(id);
    this.#absent = undefined;
    if (held === undefined) this.#held.set(id, key);
    else if (typeof held === "string") this.#held.set(id, [held, key]);
    else held.push(key);
    return key;
  }
}

function canonical(ip: string): string {
  const { family, value } = parseAddress(ip);
  return canonicalText(ip, family, value);
}

/** The canonical text of a parsed address; a dotted quad the strict parser accepted already is. */
function canonicalText(ip: string, family: 4 | 6, value: bigint): string {
  return family === 4 && ip.indexOf(":") < 0 ? ip : formatAddress(family, value);
}
