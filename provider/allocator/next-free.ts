import { formatAddress, parseAddress } from "./address";
import {
  type AllocationStrategy,
  checkStrategy,
  PoolLayout,
  type TakenAddresses,
  takenIntervals,
} from "./pool-layout";
import type { RangeSet } from "./range-set";

/** Input of {@link nextFree}. */
export interface NextFreeOptions {
  /** The pool; canonicalized in place if it is not yet. */
  rangeSet: RangeSet;
  /** CIDRs or single addresses never handed out; entries of the other family are ignored. */
  exclude?: Iterable<string>;
  /** Addresses already held: strings, an AddressSet (e.g. a store's view) or an IntervalSet. */
  taken?: TakenAddresses;
  /** The last reserved address (round-robin starts after it); ignored when outside the set. */
  cursor?: string;
  /** Default `round-robin`. */
  strategy?: AllocationStrategy;
}

/**
 * The address the allocator would hand out next, without reserving anything: a pure function of the
 * pool, its exclusions, the taken addresses and the cursor. It is the same search {@link IpAllocator}
 * runs, so a planned address (e.g. shown at preview) is exactly what `get` would give. Never skips
 * addresses one by one: the cost is O(log n) per taken or excluded block crossed.
 *
 * @returns the address in canonical form, without prefix length.
 * @throws IpamError POOL_EXHAUSTED naming the range set when nothing is free; INVALID_ADDRESS for a
 *   bad cursor, exclusion or taken address; INVALID_CONFIG for an unknown strategy; any range-set
 *   canonicalize error.
 */
export function nextFree(options: NextFreeOptions): string {
  const strategy = checkStrategy(options.strategy);
  const layout = PoolLayout.forRangeSet(options.rangeSet, options.exclude);
  let cursor: bigint | undefined;
  if (options.cursor !== undefined) {
    const c = parseAddress(options.cursor, "cursor");
    if (c.family === layout.family) cursor = c.value;
  }
  const found = layout.find(takenIntervals(options.taken, layout.family), cursor, strategy);
  if (found === undefined) throw layout.exhausted();
  return formatAddress(layout.family, found.value);
}
