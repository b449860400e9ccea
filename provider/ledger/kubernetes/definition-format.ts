// The format of a shared pool's definition object (`<name>.pool`, data key `format`): which keys it
// has and what they mean. A writer replaces the whole object, so a version that does not know a key
// drops it: a version refuses to write, plan, claim or release under a format newer than its own.
// Versions from before formats cannot be made to refuse; what their rewrite of a definition drops is
// seen in the pool instead (marker objects without `markers`, quota counters without `quotas`), and
// refused the same way until the pool's owner writes it again. See docs/shared-pools.md, "Versions".
import { IpamError } from "../../core/ipam-error";
import { shown } from "../../core/text";
import type { KubeClients } from "../../kube/kube-config";
import { poolLabel, poolObjectName, roleLabel, roles } from "./claim-names";
import { ledgerUnavailable } from "./ledger-unavailable";

/**
 * The format of the definition this version writes. Raised when a version adds a key that an
 * earlier one would drop or misread (and only then): the earlier one then refuses the pool.
 */
export const definitionFormat = 1;

/** What an earlier version's rewrite of a definition dropped, as the pool's other objects show it. */
export type Dropped = "markers" | "quotas";

/** A shared pool's definition object: where it is, and its `data`. */
export interface DefinitionObject {
  clients: KubeClients;
  namespace: string;
  pool: string;
  data: Record<string, string>;
}

const writer = (d: Record<string, string>) => `stack ${d.stack ?? "?"} (IpPool ${d.owner ?? "?"})`;

/**
 * The format `data` records: 0 for none (a definition written before formats).
 * @throws IpamError VERSION_MISMATCH naming the pool, the format found, its writer and the format
 *   this version knows, for any other format (a newer one, or one no version writes).
 */
export function formatOf(pool: string, namespace: string, data: Record<string, string>): number {
  if (data.format === undefined) return 0;
  if (data.format === String(definitionFormat)) return definitionFormat;
  const found = /^[1-9]\d{0,5}$/.test(data.format) ? data.format : shown(data.format);
  throw new IpamError(
    "VERSION_MISMATCH",
    `pool "${pool}" (namespace "${namespace}"): its definition (ConfigMap "${poolObjectName(pool)}") has ` +
      `format ${found}, written by ${writer(data)} with a newer pulumi-egress-ipam; this version knows ` +
      `format ${definitionFormat} and neither writes the definition nor plans, claims or releases in the ` +
      `pool (it would drop or misread what it does not know): upgrade pulumi-egress-ipam in this stack to ` +
      `the version that stack runs, or later`,
  );
}

/**
 * What an earlier version dropped when it rewrote the definition `d`: for a definition without
 * format, `markers` when it has none while the pool has marker objects (only a version from before
 * markers removes them), `quotas` likewise with quota counters. Empty for a definition with format.
 * @throws IpamError VERSION_MISMATCH for a newer format (see {@link formatOf}); LEDGER_UNAVAILABLE.
 */
export async function droppedBy(d: DefinitionObject): Promise<Dropped[]> {
  if (formatOf(d.pool, d.namespace, d.data) > 0) return [];
  const dropped: Dropped[] = [];
  if (d.data.markers === undefined && (await has(d, roles.marker))) dropped.push("markers");
  if (d.data.quotas === undefined && (await has(d, roles.quota))) dropped.push("quotas");
  return dropped;
}

/**
 * The refusal of every plan, claim and release (and of every stack but its owner restating the
 * pool) under a definition an earlier version rewrote, dropping `dropped`.
 * @returns IpamError VERSION_MISMATCH naming the pool, its writer, what it dropped and what to do.
 */
export function rewrittenByEarlier(
  pool: string,
  namespace: string,
  data: Record<string, string>,
  dropped: Dropped[],
) {
  const what = dropped.map((k) =>
    k === "markers"
      ? "its markers (the pool has marker objects: blocks would no longer be kept apart from what is inside them)"
      : "its quotas (the pool has quota counters: they would no longer be enforced)",
  );
  return new IpamError(
    "VERSION_MISMATCH",
    `pool "${pool}" (namespace "${namespace}"): its definition (ConfigMap "${poolObjectName(pool)}") was ` +
      `written without format by ${writer(data)}, with a pulumi-egress-ipam from before format ` +
      `${definitionFormat}, which dropped ${what.join(" and ")}; nothing is planned, claimed or released ` +
      `in the pool until its owner writes the definition again: upgrade pulumi-egress-ipam in stack ` +
      `${data.stack ?? "?"} (wherever it runs) and run its pulumi up, or take ownership with adopt: true ` +
      `from a stack on this version`,
  );
}

/**
 * Refuses a definition this version may not act under: a newer format, or one an earlier version
 * rewrote (see {@link droppedBy}).
 * @throws IpamError VERSION_MISMATCH; LEDGER_UNAVAILABLE.
 */
export async function assertKnownFormat(d: DefinitionObject): Promise<void> {
  const dropped = await droppedBy(d);
  if (dropped.length > 0) throw rewrittenByEarlier(d.pool, d.namespace, d.data, dropped);
}

/** Whether the pool has at least one object of `role`. */
async function has(d: DefinitionObject, role: string): Promise<boolean> {
  const labelSelector = `${poolLabel}=${d.pool},${roleLabel}=${role}`;
  try {
    const list = await d.clients.core.listNamespacedConfigMap({
      namespace: d.namespace,
      labelSelector,
      limit: 1,
    });
    return list.items.length > 0;
  } catch (err) {
    const place = { server: d.clients.server, context: d.clients.context, namespace: d.namespace };
    throw ledgerUnavailable(`listing the ${role} objects of pool "${d.pool}"`, err, place);
  }
}
