import { poolSpecOf, resolvePool, type ResolvedPool } from "../resources/pool/pool-spec";
import { resolveLedger } from "../resources/pool/ledger-option";
import type { KubeLedgerConfig } from "../ledger/kubernetes/kube-ledger";
import { CliError, exitCodes } from "./cli-error";
import type { SnapshotResource, StackSnapshot } from "./stack-snapshot";

/** Whether a checkpoint resource is an IpPool of this package (type token `…egress-ipam:IpPool`). */
const isPool = (r: SnapshotResource) => r.type.endsWith("egress-ipam:IpPool");

/** A pool of a stack: its URN and its validated spec. */
export interface StackPool {
  id: string;
  pool: ResolvedPool;
  /** The shared ledger its addresses are agreed in, when it has one. */
  ledger?: KubeLedgerConfig;
}

/**
 * The IpPools of a stack in checkpoint order (a copy pending deletion only when it is the only one).
 * @throws CliError naming the pool when its recorded spec is not valid.
 */
export function stackPools(snapshot: StackSnapshot): StackPool[] {
  const pools = new Map<string, SnapshotResource>();
  for (const r of snapshot.resources) {
    const id = String(r.outputs?.poolId ?? r.inputs?.poolId ?? r.urn);
    if (isPool(r) && (!pools.has(id) || !r.delete)) pools.set(id, r);
  }
  return [...pools].map(([id, r]) => {
    const props = r.outputs && Object.keys(r.outputs).length > 0 ? r.outputs : (r.inputs ?? {});
    const { pool, failures } = resolvePool(poolSpecOf(props));
    if (!pool) {
      const why = failures.map((f) => `${f.property}: ${f.reason}`).join("; ");
      throw new CliError(
        `pool ${id} in the checkpoint of stack "${snapshot.stack}" is not a valid pool (${why}); fix its inputs and run pulumi up`,
        exitCodes.usage,
        failures[0]?.code,
      );
    }
    const { config } = resolveLedger(props.ledger);
    return config ? { id, pool, ledger: config } : { id, pool };
  });
}
