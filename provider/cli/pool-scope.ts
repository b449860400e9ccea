// Which pool of a stack answers for an address `check` finds on a host. A block held in a pool is
// handed to its holder: its addresses are no longer the pool's to hand out, so the pool neither
// calls them leaked nor lists them as in use by others. A pool made of the block (its ranges inside
// it) answers for them instead; a PrefixAllocation itself has no provisioner, nothing on a platform.
import { AddressSet } from "../allocator";
import { isBlock, takeEntry } from "../ledger/held-entry";
import type { StackPool } from "./stack-pools";

/** An entry held in a pool: an address or a block (CIDR). */
export interface PoolEntry {
  /** The pool's identity (URN). */
  pool: string;
  ip: string;
}

/** Answers which pools an address is in, blocks taken out. */
export interface PoolScope {
  /** Whether `ip` is in a range of `pool` and in none of the blocks held in it. */
  answersFor(pool: StackPool, ip: string): boolean;
}

/**
 * The scope of a stack's pools given every entry held in them (the stack's records and, for shared
 * pools, every stack's claims); entries that are addresses are ignored.
 */
export function poolScope(entries: Iterable<PoolEntry>): PoolScope {
  const blocks = new Map<string, AddressSet>();
  for (const { pool, ip } of entries) {
    if (!isBlock(ip)) continue;
    const set = blocks.get(pool) ?? new AddressSet();
    takeEntry(set, ip);
    blocks.set(pool, set);
  }
  return {
    answersFor({ id, pool }, ip) {
      return pool.rangeSets.some((s) => s.contains(ip)) && !(blocks.get(id)?.has(ip) ?? false);
    },
  };
}
