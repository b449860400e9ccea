// Who holds what in a pool, as the report lists it. A ledger entry is a single address or an aligned
// block (a CIDR): the report keeps addresses in `holders` (an `ip` there is always an address) and
// blocks in `blocks`, one line each with its size.
import { parsePrefix } from "../allocator/prefix";
import { entrySpan, isBlock } from "../ledger/held-entry";

/** How an entry is held: by a live resource, one pending deletion, or an interrupted create. */
export type HoldState = "held" | "deleting" | "planned";

/** One entry of a pool (an address, or a block as a CIDR) and who holds it. */
export interface Holder {
  /** The address, or in a pool's `blocks` (and before they are split) the block's CIDR. */
  ip: string;
  /** URN of the holding resource. */
  owner: string;
  /** Its stack, for a shared pool's holders (they come from several stacks). */
  stack?: string;
  state: HoldState;
  /** The deployment (stack version) that created the holder, when the checkpoint and history tell. */
  sinceVersion?: number;
  /** That deployment's kind: `update`, `refresh`, … */
  sinceKind?: string;
  /** When the holder was created (RFC 3339), when the checkpoint tells. */
  sinceTime?: string;
  /**
   * The public address the address leaves from (aws with `elasticIps`: its Elastic IP), as the
   * stack's EgressIpAssignment of the address last recorded it (at up or refresh).
   */
  publicIp?: string;
}

/** A pool made of a block (its ranges lie inside it), as the block's entry names it. */
export interface ChildPool {
  /** The pool's URN. */
  pool: string;
  /** Its logical name. */
  name: string;
}

/** A block of a pool and who holds it: a {@link Holder} whose `ip` is the CIDR, with the block's details. */
export interface BlockHolder extends Holder {
  /** The block, e.g. `10.20.3.0/24` (also its `ip`). */
  cidr: string;
  prefixLength: number;
  /** How many addresses it spans, as a decimal string (an IPv6 block exceeds 2^53). */
  size: string;
  /** The stack's pools whose ranges lie inside this block (and in no smaller block), when there are any. */
  pools?: ChildPool[];
}

/** A holder of a block with its details; `h.ip` must be a CIDR. @throws IpamError as `entrySpan`. */
export function blockHolder(h: Holder): BlockHolder {
  const span = entrySpan(h.ip);
  return {
    ...h,
    cidr: h.ip,
    prefixLength: parsePrefix(h.ip, "held block").prefixLength,
    size: (span.end - span.start + 1n).toString(),
  };
}

/** Holders split into those of single addresses (`holders`) and of blocks, each keeping its order. */
export function splitHolders(holders: readonly Holder[]): { holders: Holder[]; blocks: BlockHolder[] } {
  return {
    holders: holders.filter((h) => !isBlock(h.ip)),
    blocks: holders.filter((h) => isBlock(h.ip)).map(blockHolder),
  };
}

/**
 * Orders entries (addresses and blocks): IPv4 before IPv6, then by first address, a larger block
 * before what it contains.
 * @throws IpamError for a text that is neither an address nor a CIDR.
 */
export function compareEntries(a: string, b: string): number {
  const x = entrySpan(a);
  const y = entrySpan(b);
  if (x.family !== y.family) return x.family - y.family;
  if (x.start !== y.start) return x.start < y.start ? -1 : 1;
  return x.end === y.end ? 0 : x.end > y.end ? -1 : 1;
}

/** Orders holders by entry, then by owner. */
export const compareHolders = (a: Holder, b: Holder): number =>
  compareEntries(a.ip, b.ip) || a.owner.localeCompare(b.owner);
