/**
 * The stable error codes of the allocator. Callers branch on these, never on message text.
 *
 * - `INVALID_ADDRESS`: a string is not an IPv4/IPv6 address or CIDR.
 * - `HOST_BITS_SET`: a subnet is not its own network address (the message names the real one).
 * - `NETWORK_TOO_SMALL`: an IPv4 /31 or /32, or an IPv6 /127 or /128, used as a range subnet.
 * - `INVALID_RANGE`: a range is missing its subnet, or its bounds or gateway do not fit its subnet.
 * - `EMPTY_RANGE_SET`: a range set without ranges.
 * - `MIXED_FAMILIES`: a range set with both IPv4 and IPv6 ranges.
 * - `OVERLAPPING_RANGES`: two ranges of one set, or two sets of one config, overlap.
 * - `NOT_IN_RANGE`: an address is outside the range set (or network) it was meant for.
 * - `IP_UNAVAILABLE`: a requested address is a gateway, excluded, or held by someone else.
 * - `POOL_EXHAUSTED`: no allocatable address is left.
 * - `DUPLICATE_ALLOCATION`: the id already holds an address in this range set.
 * - `INVALID_CONFIG`: a CNI configuration or allocator option is malformed.
 * - `NO_NETWORK`: a node allocator was built without a network.
 * - `NO_STORAGE`: a node allocator was built without a store.
 * - `LOCK_TIMEOUT`: a pool's lock (in-process, or a shared pool's Lease) was not acquired within
 *   its `lockAcquireTimeout`; the message names who holds it and since when.
 * - `LEDGER_UNAVAILABLE`: a pool's ledger could not be read or written — the stack's checkpoint
 *   (`pulumi stack export` failed) or a shared pool's API server (unreachable, forbidden); nothing
 *   was allocated. The last two come from the ledger layer, never from the allocator itself.
 * - `CONFLICT`: a Kubernetes read-modify-write lost to other writers more often than its retry
 *   budget allows (raised by the Kubernetes client layer).
 */
export type IpamErrorCode =
  | "INVALID_ADDRESS"
  | "HOST_BITS_SET"
  | "NETWORK_TOO_SMALL"
  | "INVALID_RANGE"
  | "EMPTY_RANGE_SET"
  | "MIXED_FAMILIES"
  | "OVERLAPPING_RANGES"
  | "NOT_IN_RANGE"
  | "IP_UNAVAILABLE"
  | "POOL_EXHAUSTED"
  | "DUPLICATE_ALLOCATION"
  | "INVALID_CONFIG"
  | "NO_NETWORK"
  | "NO_STORAGE"
  | "LOCK_TIMEOUT"
  | "LEDGER_UNAVAILABLE"
  | "CONFLICT";

/**
 * The one error class of the allocator. `code` is stable public API; `message` names the offending
 * value and, where there is one, the range set or network it was checked against.
 */
export class IpamError extends Error {
  /** Stable machine-readable reason; see {@link IpamErrorCode}. */
  readonly code: IpamErrorCode;

  /**
   * @param code - the stable reason.
   * @param message - human-readable text naming the value and the pool.
   */
  constructor(code: IpamErrorCode, message: string) {
    super(message);
    this.name = "IpamError";
    this.code = code;
  }
}

/**
 * True when `err` is an {@link IpamError}, optionally with the given code. Works across copies of the
 * package (checks `name` and `code` rather than `instanceof`).
 */
export function isIpamError(err: unknown, code?: IpamErrorCode): err is IpamError {
  if (typeof err !== "object" || err === null) return false;
  const e = err as { name?: unknown; code?: unknown };
  return e.name === "IpamError" && typeof e.code === "string" && (code === undefined || e.code === code);
}
