// A block is the range of the pools carved from it (child pools): before a block is given up for
// another, the stack's pools inside it must have no holders, or those holders would be stranded
// outside every range. Read from the stack's checkpoint, as the stack ledger reads it.
import { entriesOverlap, entrySpan } from "../../ledger/held-entry";
import { poolRecords } from "../../ledger/stack/allocation-record";
import type { CheckpointResource } from "../../ledger/stack/stack-checkpoint";

/**
 * The holders of the stack's pools whose ranges lie in `block`, as `<entry> (held by <urn>)`,
 * sorted: what giving the block up would strand. Pools being deleted do not count.
 */
export function childPoolHolders(resources: readonly CheckpointResource[], block: string): string[] {
  const span = entrySpan(block);
  const out: string[] = [];
  for (const r of resources) {
    if (!r.type.endsWith("egress-ipam:IpPool") || r.delete) continue;
    const poolId = r.outputs?.poolId;
    const sets = r.outputs?.rangeSets as { subnet?: string }[][] | undefined;
    if (typeof poolId !== "string" || !Array.isArray(sets)) continue;
    const inside = sets
      .flat()
      .some((x) => typeof x.subnet === "string" && entriesOverlap(span, entrySpan(x.subnet)));
    if (!inside) continue;
    for (const record of poolRecords([...resources], poolId)) {
      for (const entry of record.ips) out.push(`${entry} (held by ${record.owner})`);
    }
  }
  return [...new Set(out)].sort();
}
