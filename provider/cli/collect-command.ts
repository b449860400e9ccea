// `pulumi-egress-ipam collect --ledger kubernetes:<namespace>/<name>`: deletes the holds of a shared
// pool that lapsed (see provider/ledger/kubernetes/lapsed-holds.ts), what planners do a few at a time.
import { IpamError } from "../core/ipam-error";
import { terminalSafe } from "../core/text";
import type { KubeClients } from "../kube/kube-config";
import { ClaimStore, type Claim } from "../ledger/kubernetes/claim-store";
import { entryWrites } from "../ledger/kubernetes/entry-writes";
import { collectHolds, lapsedHolds } from "../ledger/kubernetes/lapsed-holds";
import { CliError, exitCodes } from "./cli-error";
import { compareEntries } from "./holder";
import { ledgerId, type LedgerRef } from "./ledger-usage";

/** What `collect` did: the holds it deleted, and those it left with why. */
export interface CollectResult {
  ledger: string;
  collected: { ip: string; stack: string; owner: string; lapsed: string }[];
  left: { ip: string; stack: string; owner: string; why: string }[];
}

/**
 * Deletes every hold of the pool `ref` that lapsed more than a minute before `now`, with its marker
 * tokens and quota counter key; each delete is preconditioned on what was read, so a hold renewed
 * or taken over meanwhile stays. It takes no Lease: the preconditions are what keep it safe.
 * @throws CliError (exit 3) when the cluster cannot be asked.
 */
export async function collectLapsed(
  ref: LedgerRef,
  clients: KubeClients,
  now = Date.now(),
): Promise<CollectResult> {
  const store = new ClaimStore(clients, ref.namespace, ref.name);
  const what = `pool "${ref.name}" (namespace "${ref.namespace}")`;
  try {
    const holds = lapsedHolds(await store.list(), now).sort((a, b) => compareEntries(a.ip, b.ip));
    const { collected, left } = await collectHolds(
      entryWrites(store, what, () => undefined),
      holds,
    );
    const order = (a: { ip: string }, b: { ip: string }) => compareEntries(a.ip, b.ip);
    const shown = (c: Claim) => ({ ip: c.ip, stack: c.stack, owner: c.owner });
    return {
      ledger: ledgerId(ref),
      collected: collected
        .map((c) => ({ ...shown(c), lapsed: new Date(c.expires).toISOString() }))
        .sort(order),
      left: left.map(({ hold, why }) => ({ ...shown(hold), why })).sort(order),
    };
  } catch (e) {
    if (e instanceof IpamError && e.code === "LEDGER_UNAVAILABLE")
      throw new CliError(`${e.message}; then run collect again`, exitCodes.unreachable, e.code);
    throw e;
  }
}

/** What `collect` prints. */
export function collectText(r: CollectResult): string {
  const out = [
    `collected ${r.collected.length} lapsed hold${r.collected.length === 1 ? "" : "s"} of ${r.ledger}`,
  ];
  for (const c of r.collected)
    out.push(`  ${c.ip}  ${terminalSafe(c.stack)}  ${terminalSafe(c.owner)}  lapsed ${c.lapsed}`);
  if (r.left.length > 0) {
    out.push(`left ${r.left.length} (run collect again later):`);
    for (const c of r.left) out.push(`  ${c.ip}  ${terminalSafe(c.stack)}  ${terminalSafe(c.why)}`);
  }
  return out.join("\n");
}
