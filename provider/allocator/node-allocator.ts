import { type AddressFamily, familyBits, formatAddress, parseAddress } from "./address";
import { IntervalSet } from "./interval-set";
import { IpamError } from "../core/ipam-error";
import { PoolLayout } from "./pool-layout";
import { formatPrefix, hostBitsError, parsePrefix } from "./prefix";
import type { Store } from "./store";

/** Options of {@link NodeAllocator}. */
export interface NodeAllocatorOptions {
  /** The mesh network to allocate from, e.g. `10.0.0.0/24` or `fd00::/64`; a network address. */
  network: string;
  /** Where allocations are kept, keyed by node id. */
  store: Store;
  /** Fixed addresses per node id, as `10.0.0.5` or `10.0.0.5/32` (`/128` for IPv6). */
  static?: { [nodeId: string]: string };
}

/**
 * webmesh's node IPAM: one host prefix (/32 or /128) per node id, the lowest free address after the
 * network address (the last address of the network included, as webmesh does), with static
 * assignments honoured for their node and never handed to another. A node that already holds an
 * address in the network gets the same prefix again.
 */
export class NodeAllocator {
  readonly #store: Store;
  readonly #family: AddressFamily;
  readonly #network: string;
  readonly #statics = new Map<string, string>();
  readonly #layout: PoolLayout;

  /**
   * @param options - the network, the store, and optional static assignments (checked here).
   * @throws IpamError NO_NETWORK / NO_STORAGE when either is missing; INVALID_ADDRESS or HOST_BITS_SET
   *   for a bad network; INVALID_ADDRESS for a static that is not one address; NOT_IN_RANGE for a
   *   static outside the network; IP_UNAVAILABLE when two nodes are given the same static address.
   */
  constructor(options: NodeAllocatorOptions) {
    if (options?.network === undefined || options.network === null || options.network === "") {
      throw new IpamError("NO_NETWORK", "no network configured for the node allocator");
    }
    if (options.store === undefined || options.store === null) {
      throw new IpamError("NO_STORAGE", "no storage configured for the node allocator");
    }
    this.#store = options.store;
    const p = parsePrefix(options.network, "network");
    if (p.address !== p.network) throw hostBitsError("network", options.network, p);
    this.#family = p.family;
    this.#network = formatPrefix(p.family, p.network, p.prefixLength);
    const blocked = new IntervalSet();
    const ownerOf = new Map<bigint, string>();
    for (const [nodeId, text] of Object.entries(options.static ?? {})) {
      const value = this.#parseStatic(nodeId, text, p.network, p.last);
      const other = ownerOf.get(value);
      if (other !== undefined) {
        throw new IpamError(
          "IP_UNAVAILABLE",
          `static address ${formatAddress(p.family, value)} is given to both ${other} and ${nodeId}`,
        );
      }
      ownerOf.set(value, nodeId);
      blocked.add(value);
      this.#statics.set(nodeId, formatAddress(p.family, value));
    }
    const segments = p.network < p.last ? [{ start: p.network + 1n, end: p.last }] : [];
    this.#layout = new PoolLayout(p.family, segments, blocked, `network ${this.#network}`);
  }

  /**
   * The host prefix of `nodeId`: its static address, the address it already holds in the network,
   * or the lowest free one (reserved in the store under `nodeId`).
   *
   * @throws IpamError IP_UNAVAILABLE when the node's static address is held by someone else;
   *   POOL_EXHAUSTED naming the network when no address is free.
   */
  async allocate(nodeId: string): Promise<string> {
    const bits = `/${familyBits(this.#family)}`;
    const held = await this.#store.getByID(nodeId);
    const fixed = this.#statics.get(nodeId);
    if (fixed !== undefined) {
      if (held.some((ip) => sameAddress(ip, fixed))) return fixed + bits;
      if (await this.#store.reserve(nodeId, fixed, this.#network)) return fixed + bits;
      throw new IpamError(
        "IP_UNAVAILABLE",
        `static address ${fixed} of node ${nodeId} is held by another owner`,
      );
    }
    for (const ip of held) {
      const a = parseAddress(ip, "held address");
      if (
        a.family === this.#family &&
        this.#layout.segmentOf(a.value) >= 0 &&
        !this.#layout.blocked.has(a.value)
      ) {
        return formatAddress(a.family, a.value) + bits;
      }
    }
    const taken = (await this.#store.reserved()).intervalsOf(this.#family);
    const lost = new IntervalSet();
    for (;;) {
      const found = this.#layout.find(taken, undefined, "lowest-free", lost);
      if (found === undefined) throw this.#layout.exhausted();
      const ip = formatAddress(this.#family, found.value);
      if (await this.#store.reserve(nodeId, ip, this.#network)) return ip + bits;
      lost.add(found.value);
    }
  }

  #parseStatic(nodeId: string, text: string, network: bigint, last: bigint): bigint {
    const what = `static address of node ${nodeId}`;
    let a: { family: AddressFamily; value: bigint };
    if (typeof text === "string" && text.includes("/")) {
      const p = parsePrefix(text, what);
      if (p.prefixLength !== familyBits(p.family)) {
        throw new IpamError(
          "INVALID_ADDRESS",
          `${what} ${text} must be a single address (/${familyBits(p.family)})`,
        );
      }
      a = { family: p.family, value: p.address };
    } else {
      a = parseAddress(text, what);
    }
    if (a.family !== this.#family || a.value < network || a.value > last) {
      throw new IpamError("NOT_IN_RANGE", `${what} ${text} is not in network ${this.#network}`);
    }
    return a.value;
  }
}

function sameAddress(a: string, canonical: string): boolean {
  const p = parseAddress(a, "held address");
  return formatAddress(p.family, p.value) === canonical;
}
