import { poolSpecOf, resolvePool, type ResolvedPool } from "../resources/pool/pool-spec";
import { ownKind } from "../core/resource-types";
import { resolveLedger } from "../resources/pool/ledger-option";
import { poolOfDefinition } from "../resources/pool/canonical-definition";
import { codeOf } from "../core/ipam-error";
import type { KubeLedgerConfig } from "../ledger/kubernetes/kube-ledger";
import { CliError, exitCodes } from "./cli-error";
import type { SnapshotResource, StackSnapshot } from "./stack-snapshot";

/** Whether a checkpoint resource is an IpPool of this package (dynamic or plugin type; see ownKind). */
const isPool = (r: SnapshotResource) => ownKind(r.type) === "IpPool";

/** A pool of a stack: its URN and its validated spec (for a reference to a shared pool, its owner's). */
export interface StackPool {
  id: string;
  pool: ResolvedPool;
  /** The shared ledger its addresses are agreed in, when it has one. */
  ledger?: KubeLedgerConfig;
}

/**
 * The IpPools of a stack in checkpoint order (a copy pending deletion only when it is the only one),
 * references to shared pools (`IpPool.shared`) with the definition they recorded.
 * @throws CliError naming the pool when its recorded spec (or a reference's definition) is not
 *   valid, or a reference recorded none.
 */
export function stackPools(snapshot: StackSnapshot): StackPool[] {
  const pools = new Map<string, SnapshotResource>();
  for (const r of snapshot.resources) {
    const id = String(r.outputs?.poolId ?? r.inputs?.poolId ?? r.urn);
    if (isPool(r) && (!pools.has(id) || !r.delete)) pools.set(id, r);
  }
  return [...pools].map(([id, r]) => {
    const props = r.outputs && Object.keys(r.outputs).length > 0 ? r.outputs : (r.inputs ?? {});
    const pool = props.shared === true ? referencedPool(snapshot, id, props) : ownPool(snapshot, id, props);
    const { config } = resolveLedger(props.ledger);
    return config ? { id, pool, ledger: config } : { id, pool };
  });
}

/** A pool the stack defines: from the spec its state records. */
function ownPool(snapshot: StackSnapshot, id: string, props: Record<string, unknown>): ResolvedPool {
  const { pool, failures } = resolvePool(poolSpecOf(props));
  if (pool) return pool;
  const why = failures.map((f) => `${f.property}: ${f.reason}`).join("; ");
  throw new CliError(
    `pool ${id} in the checkpoint of stack "${snapshot.stack}" is not a valid pool (${why}); fix its inputs and run pulumi up`,
    exitCodes.usage,
    failures[0]?.code,
  );
}

/**
 * A reference to a shared pool another stack owns (`IpPool.shared`): it has no spec of its own, but
 * the definition it read from the ledger at its last check, as its `definition` output. That is the
 * pool its holders were planned in, so the one to report and check them against.
 */
function referencedPool(snapshot: StackSnapshot, id: string, props: Record<string, unknown>): ResolvedPool {
  const where = `shared pool reference ${id} in the checkpoint of stack "${snapshot.stack}"`;
  if (typeof props.definition !== "string") {
    throw new CliError(
      `${where} has no definition recorded (an interrupted create); run pulumi refresh or pulumi up on the stack, then this again`,
      exitCodes.usage,
      "INVALID_STATE",
    );
  }
  try {
    return poolOfDefinition(props.definition);
  } catch (e) {
    throw new CliError(
      `${where}: ${(e as Error).message}; run pulumi refresh on the stack to read it from the ledger again`,
      exitCodes.usage,
      codeOf(e, "INVALID_STATE"),
    );
  }
}
