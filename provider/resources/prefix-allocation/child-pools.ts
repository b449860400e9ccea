// A block is the range of the pools carved from it (child pools): before a block is given up for
// another, the stack's pools inside it must have no holders, or those holders would be stranded
// outside every range. Read from the stack's checkpoint, as the stack ledger reads it.
import { entrySpan } from "../../ledger/held-entry";
import { ownKind } from "../../core/resource-types";
import { poolRecords } from "../../ledger/stack/allocation-record";
import type { CheckpointResource } from "../../ledger/stack/stack-checkpoint";

/**
 * The holders of the stack's pools carved from `block` (every subnet of their ranges inside it;
 * never `ownPool`, the pool the block itself comes from), as `<entry> (held by <urn>)`, sorted: what
 * giving the block up would strand. Pools being deleted do not count.
 */
export function childPoolHolders(
  resources: readonly CheckpointResource[],
  block: string,
  ownPool: string,
): string[] {
  const span = entrySpan(block);
  const inside = (subnet: unknown) => {
    if (typeof subnet !== "string") return false;
    const s = entrySpan(subnet);
    return s.family === span.family && s.start >= span.start && s.end <= span.end;
  };
  const out: string[] = [];
  for (const r of resources) {
    if (ownKind(r.type) !== "IpPool" || r.delete) continue;
    const poolId = r.outputs?.poolId;
    const sets = r.outputs?.rangeSets as { subnet?: string }[][] | undefined;
    if (typeof poolId !== "string" || poolId === ownPool || !Array.isArray(sets)) continue;
    const subnets = sets.flat().map((x) => x.subnet);
    if (subnets.length === 0 || !subnets.every(inside)) continue;
    for (const record of poolRecords([...resources], poolId)) {
      for (const entry of record.ips) out.push(`${entry} (held by ${record.owner})`);
    }
  }
  return [...new Set(out)].sort();
}
