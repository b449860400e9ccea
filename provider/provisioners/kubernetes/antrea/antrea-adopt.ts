import { IpamError } from "../../../core/ipam-error";
import type { KubeClients } from "../../../kube/kube-config";
import { servesNamespace, type AntreaEgressFacts } from "./antrea-namespaces";
import { isManaged } from "../managed-by";
import { listNamespaceFacts, namedNamespaces, type NamespaceFacts } from "../namespace-addresses";

// `adopt: true` with the antrea kind: an Egress written by hand becomes the one holding its address
// for the namespace, as it is (its name, appliedTo and status stay; it is labelled ours). Only an
// Egress that this package could have written is taken over: one address, one namespace, the
// provisioner's externalIPPool. Anything else is refused at preview, naming it and what to do.

/** The namespaces an Egress applies to every Pod of. */
const served = (e: AntreaEgressFacts, all: NamespaceFacts[]) =>
  all.filter((n) => servesNamespace(e, n)).map((n) => n.name);

/** Why `adopt` cannot take `e` over for `namespace` as it is, or undefined when it can. */
function whyNot(e: AntreaEgressFacts, namespace: string, all: NamespaceFacts[], externalIPPool?: string) {
  const names = served(e, all);
  if (names.length !== 1 || names[0] !== namespace) {
    return (
      `it applies to ${namedNamespaces(names)}; adopt takes over an Egress that serves this namespace alone: ` +
      `give each namespace its own Egress first`
    );
  }
  if (e.listed || e.ips.length !== 1) {
    return (
      `it lists egressIPs ${e.ips.join(", ") || "(none)"}; adopt takes over an Egress with one egressIP (as this ` +
      `package writes them): give it egressIP instead`
    );
  }
  if (e.externalIPPool !== externalIPPool) {
    const theirs =
      e.externalIPPool === undefined ? "no externalIPPool" : `externalIPPool "${e.externalIPPool}"`;
    const ours = externalIPPool === undefined ? "none" : `"${externalIPPool}"`;
    const fix =
      e.externalIPPool === undefined
        ? "leave externalIPPool out of the provisioner"
        : `set externalIPPool: "${e.externalIPPool}" on the provisioner`;
    return (
      `it has ${theirs} and the provisioner asks for ${ours}; adopt takes the Egress over as it is: ${fix} ` +
      `(pulumi-egress-ipam import writes it so)`
    );
  }
  return undefined;
}

/**
 * Refuses, at preview, the Egresses written by hand (not managed by this package) that `adopt:
 * true` would take over for `ns` and cannot as they are (see {@link whyNot}): one serving other
 * namespaces too, listing several addresses, or with another externalIPPool than the provisioner's.
 * `holder` names the adopting resource in messages.
 * @throws IpamError INVALID_INPUT naming the Egress, the problem and what to do.
 */
export async function refuseUnadoptable(
  kube: KubeClients,
  egresses: AntreaEgressFacts[],
  ns: NamespaceFacts,
  externalIPPool: string | undefined,
  holder: string,
): Promise<void> {
  const theirs = egresses.filter((e) => !isManaged(e.labels) && e.ips.length > 0 && servesNamespace(e, ns));
  if (theirs.length === 0) return;
  const all = await listNamespaceFacts(kube, "which ones an Egress written by hand applies to");
  for (const e of theirs) {
    const why = whyNot(e, ns.name, all, externalIPPool);
    if (why) {
      throw new IpamError(
        "INVALID_INPUT",
        `${holder} adopts the addresses of namespace ${ns.name}, and cannot take Egress ${e.name} over: ${why}`,
      );
    }
  }
}

/**
 * The Egress that is to hold `ip` of `namespace`: `own` (its own, or one adopted for it before),
 * or with `adopting`, when `own` is not managed by this package, the Egress written by hand that
 * has `ip` (refused unless it could be taken over as it is, see {@link refuseUnadoptable}).
 * @throws IpamError INVALID_INPUT naming the Egress and the problem.
 */
export async function takeoverTarget(
  kube: KubeClients,
  egresses: AntreaEgressFacts[],
  namespace: string,
  ip: string,
  own: string,
  adopting: boolean,
  externalIPPool: string | undefined,
): Promise<{ name: string; takeOver: boolean }> {
  const existing = egresses.find((e) => e.name === own);
  if (!adopting || (existing && isManaged(existing.labels))) return { name: own, takeOver: false };
  const holder = egresses.find((e) => !isManaged(e.labels) && e.ips.includes(ip));
  if (!holder) return { name: own, takeOver: false };
  const why = whyNot(
    holder,
    namespace,
    await listNamespaceFacts(kube, "which ones an Egress applies to"),
    externalIPPool,
  );
  if (why) {
    throw new IpamError(
      "INVALID_INPUT",
      `cannot adopt ${ip} for namespace ${namespace} from Egress ${holder.name}: ${why}`,
    );
  }
  return { name: holder.name, takeOver: true };
}
