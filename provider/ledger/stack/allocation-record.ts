import type { CheckpointResource } from "./stack-checkpoint";

/**
 * The property under which earlier versions recorded an allocation (the whole record, later only
 * `{ seq }`); still read, no longer written.
 */
const legacyRecordProperty = "allocation";

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
 * The properties that record `record` on a resource: its own `poolId`, `owner` and `ips`, and
 * `seq`. Every property value costs the engine again at each checkpoint write of a deployment (a
 * nested object about twice a plain value), so nothing is stored twice or nested.
 */
export function recordProps(record: AllocationRecord) {
  return { poolId: record.pool, owner: record.owner, ips: record.ips, seq: record.seq };
}

/**
 * The properties {@link recordProps} writes. The stack's taken set is read from them in a checkpoint
 * exported without its secrets, so they are never stored as secrets (a holder whose `ip` is one
 * would be missing from every later plan); the address is the resource's ID, stored in plain, anyway.
 */
export const recordKeys: ReadonlySet<string> = new Set(["poolId", "owner", "ips", "seq"]);

/**
 * Reads a record from a property bag: `poolId`, `owner`, `ips` and a numeric `seq` (written by
 * {@link recordProps}), or, as earlier versions wrote them, the same with `allocation: { seq }` or
 * a whole record in `allocation`. Undefined when absent or malformed.
 */
export function readRecord(props: Record<string, unknown> | undefined): AllocationRecord | undefined {
  if (!props) return undefined;
  const legacy = props[legacyRecordProperty] as Partial<AllocationRecord> | undefined;
  const hasLegacy = typeof legacy === "object" && legacy !== null;
  if (!hasLegacy && typeof props.seq !== "number") return undefined;
  const whole = hasLegacy && typeof legacy.pool === "string";
  const pool = whole ? legacy.pool : props.poolId;
  const owner = whole ? legacy.owner : props.owner;
  const ips = whole ? legacy.ips : props.ips;
  const seq = hasLegacy ? legacy.seq : props.seq;
  if (typeof pool !== "string" || typeof owner !== "string") return undefined;
  if (!Array.isArray(ips) || !ips.every((ip) => typeof ip === "string")) return undefined;
  return { pool, owner, ips, seq: typeof seq === "number" ? seq : 0 };
}

/** A record as a checkpoint holds it: of the resource instance that carries it. */
export interface CarriedRecord extends AllocationRecord {
  /** The instance's claims in a shared pool (`instance` output), when it has one. */
  instance?: string;
  /**
   * The `owner` written in the record: the URN its resource had when it was planned, which a rename
   * with an alias keeps. The resource's delete names it, as the only identity its outputs carry.
   * Absent where it is `owner`.
   */
  named?: string;
}

/**
 * Every record of `pool` in a checkpoint. Outputs (what a create or update returned) and inputs
 * (what `check` planned, the only record of an interrupted create) both count, so an address is
 * taken as soon as any copy of any resource mentions it — including copies pending deletion.
 *
 * The holder is the resource that carries the record, by its URN in the checkpoint, not the
 * `owner` written in it: a resource renamed with an alias keeps the record of its old name, and a
 * new resource given that name later is another holder, which must not find the address its own.
 */
export function poolRecords(resources: CheckpointResource[], pool: string): CarriedRecord[] {
  const out: CarriedRecord[] = [];
  for (const r of resources) {
    const instance = typeof r.outputs?.instance === "string" ? r.outputs.instance : undefined;
    for (const record of [readRecord(r.outputs), readRecord(r.inputs)]) {
      if (record?.pool !== pool) continue;
      out.push({
        ...record,
        owner: r.urn,
        named: record.owner,
        ...(instance === undefined ? {} : { instance }),
      });
    }
  }
  return out;
}
