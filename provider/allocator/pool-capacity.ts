import { PoolLayout, type TakenAddresses, takenIntervals } from "./pool-layout";
import type { RangeSet } from "./range-set";

/**
 * How many addresses the pool can ever hand out: every address of every range, minus each range's
 * gateway (when inside it) and minus the exclusions. Computed over intervals, so an IPv6 /64 costs the
 * same as a /29.
 *
 * @throws IpamError any range-set canonicalize error, or INVALID_ADDRESS / HOST_BITS_SET for a bad
 *   exclusion.
 */
export function poolCapacity(rangeSet: RangeSet, exclude?: Iterable<string>): bigint {
  return PoolLayout.forRangeSet(rangeSet, exclude).capacity();
}

/**
 * How many allocatable addresses are still free: {@link poolCapacity} minus the taken addresses that
 * are allocatable (taken addresses outside the pool, on a gateway or excluded do not count twice).
 *
 * @throws IpamError as {@link poolCapacity}, or INVALID_ADDRESS for a taken string that is not an
 *   address.
 */
export function freeCount(
  rangeSet: RangeSet,
  exclude: Iterable<string> | undefined,
  taken: TakenAddresses,
): bigint {
  const layout = PoolLayout.forRangeSet(rangeSet, exclude);
  return layout.freeCount(takenIntervals(taken, layout.family));
}
