/** What a shared world leaves on its ledger: the claims and holds of its stacks, which destroy must take. */
import { kube } from "../support/kube";

/**
 * The claim objects (claims and holds of addresses and blocks) left in a ledger namespace, by name
 * and state. A pool's definition, its markers and its Lease may stay (docs/shared-pools.md:
 * deleting the last pool leaves the definition and the Lease).
 */
export async function ledgerLeftovers(namespace: string): Promise<string[]> {
  const { items } = await kube().core.listNamespacedConfigMap({
    namespace,
    labelSelector: "egress-ipam/role=claim",
  });
  return items.map((cm) => `${cm.metadata?.name ?? "?"} (${JSON.stringify(cm.data ?? {}).slice(0, 200)})`);
}
