import type { CheckpointResource } from "./stack-checkpoint";

/** The input and output property under which every IP-holding resource records its allocation. */
export const recordProperty = "allocation";

/**
 * What a resource holds from a pool, stored in its inputs (planned at `check`) and outputs (after
 * create). Pulumi state is the ledger: the union of these records over a stack is the taken set.
 */
export interface AllocationRecord {
  /** Identity of the pool (its URN). */
  pool: string;
  /** Identity of the holder (its URN). */
  owner: string;
  /** Addresses held, canonical, without prefix length. */
  ips: string[];
  /**
   * Position in the pool's allocation order. The record with the highest `seq` in state gives the
   * round-robin cursor of the next deployment. 0 for requested addresses: they do not move the
   * cursor, so automatic plans do not depend on requests that other holders cannot know about.
   */
  seq: number;
}

/**
 * The properties that record `record` on a resource: the pool, owner and addresses are the
 * resource's own `poolId`, `owner` and `ips`, and `allocation` adds only the `seq`. Every property
 * value costs the engine again at each checkpoint write of a deployment, so nothing is stored twice.
 */
export function recordProps(record: AllocationRecord) {
  return { poolId: record.pool, owner: record.owner, ips: record.ips, [recordProperty]: { seq: record.seq } };
}

/**
 * Reads a record from a property bag: `allocation: { seq }` with the bag's `poolId`, `owner` and
 * `ips` (written by {@link recordProps}), or a whole record in `allocation` (as earlier versions
 * wrote it, still read). Undefined when absent or malformed.
 */
export function readRecord(props: Record<string, unknown> | undefined): AllocationRecord | undefined {
  const r = props?.[recordProperty] as Partial<AllocationRecord> | undefined;
  if (!r || typeof r !== "object") return undefined;
  const whole = typeof r.pool === "string";
  const pool = whole ? r.pool : props!.poolId;
  const owner = whole ? r.owner : props!.owner;
  const ips = whole ? r.ips : props!.ips;
  if (typeof pool !== "string" || typeof owner !== "string") return undefined;
  if (!Array.isArray(ips) || !ips.every((ip) => typeof ip === "string")) return undefined;
  return { pool, owner, ips, seq: typeof r.seq === "number" ? r.seq : 0 };
}

/**
 * Every record of `pool` in a checkpoint. Outputs (what a create or update returned) and inputs
 * (what `check` planned, the only record of an interrupted create) both count, so an address is
 * taken as soon as any copy of any resource mentions it — including copies pending deletion.
 */
export function poolRecords(resources: CheckpointResource[], pool: string): AllocationRecord[] {
  const out: AllocationRecord[] = [];
  for (const r of resources) {
    for (const record of [readRecord(r.outputs), readRecord(r.inputs)]) {
      if (record?.pool === pool) out.push(record);
    }
  }
  return out;
}
