import { type AddressFamily, formatAddress, parseAddress } from "./address";
import { IntervalSet, type ReadonlyIntervalSet } from "./interval-set";

/** The read side of an {@link AddressSet}. */
export interface ReadonlyAddressSet extends Iterable<string> {
  /** How many addresses it holds, both families together. */
  readonly size: bigint;
  /** Whether it holds `ip`. @throws IpamError INVALID_ADDRESS when `ip` is not an address. */
  has(ip: string): boolean;
  /** The ordered interval view of one family, for O(log n) next-free search. */
  intervalsOf(family: AddressFamily): ReadonlyIntervalSet;
}

/**
 * A set of single addresses with a string interface (canonical strings in and out) and an ordered
 * interval structure per family inside. It is the "taken" view a {@link Store} exposes and a form
 * `nextFree` accepts. Iterating yields every address in canonical form, IPv4 first, ascending — so
 * only iterate sets you know to be small.
 */
export class AddressSet implements ReadonlyAddressSet {
  readonly #v4 = new IntervalSet();
  readonly #v6 = new IntervalSet();

  /** @param addresses - initial addresses. @throws IpamError INVALID_ADDRESS for any non-address. */
  constructor(addresses: Iterable<string> = []) {
    for (const ip of addresses) this.add(ip);
  }

  /** How many addresses it holds, both families together. */
  get size(): bigint {
    return this.#v4.size + this.#v6.size;
  }

  /** Adds `ip`; returns false when it was already present. @throws IpamError INVALID_ADDRESS. */
  add(ip: string): boolean {
    const { family, value } = parseAddress(ip);
    return this.addValue(family, value);
  }

  /** Removes `ip`; returns whether it was present. @throws IpamError INVALID_ADDRESS. */
  delete(ip: string): boolean {
    const { family, value } = parseAddress(ip);
    return this.deleteValue(family, value);
  }

  /** Whether it holds `ip`. @throws IpamError INVALID_ADDRESS. */
  has(ip: string): boolean {
    const { family, value } = parseAddress(ip);
    return this.#of(family).has(value);
  }

  /** Adds an already parsed address; returns false when it was already present. */
  addValue(family: AddressFamily, value: bigint): boolean {
    return this.#of(family).add(value) > 0n;
  }

  /** Removes an already parsed address; returns whether it was present. */
  deleteValue(family: AddressFamily, value: bigint): boolean {
    return this.#of(family).delete(value) > 0n;
  }

  /** Adds every address of `[start, end]` (a block); returns how many were not already present. */
  addRange(family: AddressFamily, start: bigint, end: bigint): bigint {
    return this.#of(family).add(start, end);
  }

  /** Removes every address of `[start, end]` (a block); returns how many were present. */
  deleteRange(family: AddressFamily, start: bigint, end: bigint): bigint {
    return this.#of(family).delete(start, end);
  }

  /** The live ordered interval view of one family. */
  intervalsOf(family: AddressFamily): ReadonlyIntervalSet {
    return this.#of(family);
  }

  /** Every address, canonical, IPv4 first, ascending. Enumerates: for small sets only. */
  *[Symbol.iterator](): Iterator<string> {
    for (const family of [4, 6] as const) {
      for (const [start, end] of this.#of(family).intervals()) {
        for (let v = start; v <= end; v++) yield formatAddress(family, v);
      }
    }
  }

  #of(family: AddressFamily): IntervalSet {
    return family === 4 ? this.#v4 : this.#v6;
  }
}
