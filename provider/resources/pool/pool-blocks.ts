// Blocks (aligned CIDRs) from a pool: which length a request gets, whether the pool's rule allows
// it, the chooser a ledger plans automatic blocks with, and what a held block shows as outputs.
import {
  checkBlock,
  IpamError,
  nextFreeBlock,
  type ReadonlyAddressSet,
  type RangeSet,
} from "../../allocator";
import { formatAddress } from "../../allocator/address";
import { parsePrefix } from "../../allocator/prefix";
import { ruleText, widestSubnet, type ResolvedPool } from "./pool-spec";
import type { PlanRequest } from "../../ledger/ledger";

/**
 * The range set a pool's blocks come from.
 * @throws IpamError INVALID_INPUT for a node network or a dual-stack pool (a block is of one family).
 */
export function blockRangeSet(pool: ResolvedPool): RangeSet {
  if (pool.node) {
    throw new IpamError("INVALID_INPUT", "a node network hands out one host prefix per node ID, not blocks");
  }
  if (pool.rangeSets.length > 1) {
    throw new IpamError(
      "INVALID_INPUT",
      "a dual-stack pool has two families and a block is of one: carve blocks from a pool of one family",
    );
  }
  return pool.rangeSets[0]!;
}

/**
 * The prefix length a block request gets: that of `cidr` when it requests one, else `prefixLength`,
 * else the pool rule's default; checked against the pool's rule.
 * @throws IpamError PREFIX_NOT_ALLOWED naming the rule (or its absence) and the length.
 */
export function blockLength(pool: ResolvedPool, prefixLength: number | undefined, cidr?: string): number {
  const rule = pool.prefixLengths;
  const length =
    cidr !== undefined ? parsePrefix(cidr, "cidr").prefixLength : (prefixLength ?? rule?.default);
  if (length === undefined) {
    throw new IpamError(
      "PREFIX_NOT_ALLOWED",
      "the block gives no prefix length and its pool's rule has no default: set prefixLength (or cidr), " +
        "or give the pool prefixLengths: { default: … }",
    );
  }
  if (
    rule &&
    ((rule.min !== undefined && length < rule.min) || (rule.max !== undefined && length > rule.max))
  ) {
    throw new IpamError(
      "PREFIX_NOT_ALLOWED",
      `a /${length} block is outside the pool's rule prefixLengths ${ruleText(rule)}: ask for a length it allows, ` +
        "or change the pool's prefixLengths",
    );
  }
  const widest = widestSubnet(pool.rangeSets);
  if (length < widest) {
    throw new IpamError(
      "PREFIX_NOT_ALLOWED",
      `a /${length} block is larger than every subnet of the pool (the largest is a /${widest}): ask for a /${widest} ` +
        "or a longer prefix, or add a larger range to the pool",
    );
  }
  return length;
}

/**
 * The chooser a ledger plans an automatic block with: the pool's next free block of `length` by its
 * strategy, with the pool's exclusions and reserved addresses kept out of it and everything held
 * (addresses and blocks) taken; round-robin continues after the newest allocation.
 */
export function blockChooser(pool: ResolvedPool, length: number) {
  const rangeSet = blockRangeSet(pool);
  const never = [...pool.exclude, ...pool.reserved];
  return (taken: ReadonlyAddressSet, latest: readonly string[]): string => {
    const cursor = latest.at(-1);
    return nextFreeBlock({
      rangeSet,
      prefixLength: length,
      exclude: never,
      taken,
      cursor,
      strategy: pool.strategy,
    });
  };
}

/**
 * Checks that `cidr` may be held as a block of the pool: aligned, wholly between one range's
 * rangeStart and rangeEnd, not holding that range's gateway, containing nothing excluded (reserved
 * addresses are allowed: requesting them is what they are for). Returns the canonical CIDR.
 * @throws IpamError INVALID_ADDRESS, HOST_BITS_SET, NOT_IN_RANGE or IP_UNAVAILABLE naming the block.
 */
export function checkRequestableBlock(pool: ResolvedPool, cidr: string): string {
  return checkBlock({ rangeSet: blockRangeSet(pool), cidr, exclude: pool.exclude });
}

/** What a block shows as outputs. */
export interface BlockDetails {
  /** The block, e.g. `10.20.3.0/24`. */
  cidr: string;
  /** Its network address, e.g. `10.20.3.0`. */
  network: string;
  /** Its prefix length, e.g. 24. */
  prefixLength: number;
  /** First host address: the network address + 1 for IPv4 blocks of 4 or more addresses, else the network address. */
  first: string;
  /** Last host address: the broadcast address − 1 for IPv4 blocks of 4 or more addresses, else the last address. */
  last: string;
  /** How many addresses the block spans, as a decimal string (an IPv6 block exceeds 2^53). */
  size: string;
}

/** The outputs of a held block. */
export function blockDetails(cidr: string): BlockDetails {
  const p = parsePrefix(cidr, "block");
  const size = p.last - p.network + 1n;
  const hosts = p.family === 4 && size >= 4n;
  return {
    cidr,
    network: formatAddress(p.family, p.network),
    prefixLength: p.prefixLength,
    first: formatAddress(p.family, hosts ? p.network + 1n : p.network),
    last: formatAddress(p.family, hosts ? p.last - 1n : p.last),
    size: size.toString(),
  };
}

/**
 * How a block holder is written in its pool's queue (the `ip` of its line): its requested CIDR, or
 * `/<length>` for an automatic block (`/` alone: the rule's default length).
 */
export const queuedBlock = (cidr: string | undefined, prefixLength: number | undefined): string =>
  cidr ?? `/${prefixLength ?? ""}`;

/**
 * The plan request of a block holder queued as `line` (see {@link queuedBlock}), for planning it
 * ahead of a later holder as its own check would plan it; undefined when its own check refuses it.
 */
export function queuedBlockRequest(
  pool: ResolvedPool,
  poolId: string,
  owner: string,
  line: string,
): PlanRequest | undefined {
  try {
    if (line.startsWith("/")) {
      const length = blockLength(pool, line === "/" ? undefined : Number(line.slice(1)));
      return { pool: poolId, owner, count: 1, prefixLength: length, choose: blockChooser(pool, length) };
    }
    blockLength(pool, undefined, line);
    const cidr = checkRequestableBlock(pool, line);
    return {
      pool: poolId,
      owner,
      requested: [cidr],
      choose: blockChooser(pool, parsePrefix(cidr).prefixLength),
    };
  } catch {
    return undefined;
  }
}
