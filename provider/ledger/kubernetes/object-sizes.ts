// How large a shared pool's objects are, against what a ConfigMap may hold. Claims are small; a
// marker lists every entry registered inside its block and a quota counter every entry of its
// group, so those grow with the pool: `report --ledger` shows the largest against the limit.
import type { KubeClients } from "../../kube/kube-config";
import { poolLabel, roleLabel } from "./claim-names";
import { ledgerUnavailable } from "./ledger-unavailable";

/**
 * The most a ConfigMap's data may hold, 1 MiB: the API server refuses an object whose values are
 * larger, and etcd a request over 1.5 MiB (keys, values and metadata).
 */
export const configMapLimit = 1024 * 1024;

/**
 * The most a marker or a quota counter may hold, by {@link dataBytes}: {@link configMapLimit}, or
 * `EGRESS_IPAM_LEDGER_OBJECT_BYTES` where it is set (tests fill a pool past a small limit with it; a
 * value that is no positive whole number, or over the ConfigMap limit, is ignored). A registration
 * that would take one past it is refused (LEDGER_FULL) before it is written.
 */
export function objectLimit(): number {
  const set = Number(process.env.EGRESS_IPAM_LEDGER_OBJECT_BYTES);
  return Number.isInteger(set) && set > 0 && set < configMapLimit ? set : configMapLimit;
}

/** One object of a pool and the size of its data. */
export interface ObjectSize {
  /** The ConfigMap's name. */
  name: string;
  /** Its `egress-ipam/role` label: `claim`, `marker`, `quota` or `pool` (its definition). */
  role: string;
  /** Its data in UTF-8 bytes, keys and values (see {@link dataBytes}). */
  bytes: number;
  /** How many keys its data has (a marker's or counter's entries, plus a few of its own). */
  keys: number;
}

/**
 * The size of a ConfigMap's data as this package measures it against {@link configMapLimit}: every
 * key and value in UTF-8 bytes. The API server counts the values only; the keys count toward
 * etcd's request limit, so counting them too errs on the side of warning early.
 */
export function dataBytes(data: Record<string, string> | undefined): number {
  let n = 0;
  for (const [k, v] of Object.entries(data ?? {})) n += Buffer.byteLength(k) + Buffer.byteLength(v);
  return n;
}

/**
 * Every object of pool `pool` in `namespace` (claims, markers, quota counters, its definition) with
 * its size, largest first. Read only.
 * @throws IpamError LEDGER_UNAVAILABLE when they cannot be listed.
 */
export async function objectSizes(
  clients: KubeClients,
  namespace: string,
  pool: string,
): Promise<ObjectSize[]> {
  const place = { server: clients.server, context: clients.context, namespace };
  const list = await clients.core
    .listNamespacedConfigMap({ namespace, labelSelector: `${poolLabel}=${pool}` })
    .catch((err: unknown) => {
      throw ledgerUnavailable(`listing the objects of pool "${pool}"`, err, place);
    });
  return list.items
    .map((cm) => ({
      name: cm.metadata?.name ?? "",
      role: cm.metadata?.labels?.[roleLabel] ?? "",
      bytes: dataBytes(cm.data),
      keys: Object.keys(cm.data ?? {}).length,
    }))
    .sort((a, b) => b.bytes - a.bytes || a.name.localeCompare(b.name));
}
