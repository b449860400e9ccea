import { IpamError, type IpamErrorCode } from "../../../core/ipam-error";
import type { KubeClients } from "../../../kube/kube-config";
import type { Edit, KubeObject } from "../../../kube/object-edit";
import { ciliumObjectName, policyFamily, policySpec, type PolicySelection } from "./cilium-policy";
import { managedBy } from "../managed-by";
import { ownersAnnotation } from "../owners";
import { entryAddress, gatewayEntries, servesNamespace, type CiliumPolicyFacts } from "./cilium-namespaces";
import { describeScope, scopeOf } from "./cilium-destinations";
import { addressFamily } from "../../../allocator/address";
import { hostnameLabel, type CiliumGateway } from "../egress-view";
import type { CiliumProvisionerConfig } from "../../config/kube-provisioner-config";
import { isManaged } from "../managed-by";
import { listNamespaceFacts, namedNamespaces, type NamespaceFacts } from "../namespace-addresses";
import { adoptedForAnnotation } from "../namespace-marks";

// `adopt: true` with the cilium kind: a CiliumEgressGatewayPolicy written by hand becomes the
// namespace's policy of its gateways' family, as it is (its name, selectors and gateways stay; it
// is labelled ours and annotated with the namespace). Only a policy this package could go on
// writing is taken over: it serves the namespace alone, every gateway names its egressIP, all of
// one family, and it sends what the provisioner's destinations and excluded of that family say.
// Anything else is refused at preview.

/**
 * The policy holding a namespace's gateways of `selection` (a family, a pod selector): for every
 * pod, one adopted for it (managed, annotated with the namespace, its gateways of that family),
 * else {@link ciliumObjectName}.
 */
export function namespacePolicyName(
  policies: {
    name: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
    gateways?: { ip: string }[];
  }[],
  namespace: string,
  selection: PolicySelection = {},
): string {
  if (selection.podSelector) return ciliumObjectName(namespace, selection);
  const adopted = policies.find(
    (p) =>
      isManaged(p.labels) &&
      p.annotations[adoptedForAnnotation] === namespace &&
      policyFamily(p) === (selection.family ?? 4),
  );
  return adopted?.name ?? ciliumObjectName(namespace, selection);
}

/** Whether a policy's gateways name addresses of both families. */
const mixesFamilies = (p: CiliumPolicyFacts) =>
  new Set(p.gateways.filter((g) => g.ip).map((g) => addressFamily(g.ip))).size > 1;

const served = (p: CiliumPolicyFacts, all: NamespaceFacts[]) =>
  all.filter((n) => servesNamespace(p, n)).map((n) => n.name);

/** Why `adopt` cannot take `p` over for `namespace` as it is (with the code to refuse with), or undefined. */
function whyNot(
  p: CiliumPolicyFacts,
  namespace: string,
  all: NamespaceFacts[],
  config: CiliumProvisionerConfig,
): { code: IpamErrorCode; text: string } | undefined {
  const names = served(p, all);
  if (names.length !== 1 || names[0] !== namespace) {
    return {
      code: "ADDRESS_IN_USE",
      text:
        `its selectors take the Pods of ${namedNamespaces(names)}; adopt takes over a policy that serves this ` +
        `namespace alone: give each namespace its own policy first`,
    };
  }
  if (p.gateways.some((g) => !g.ip)) {
    return {
      code: "INVALID_INPUT",
      text: `a gateway of it names no egressIP (an interface's address); adopt takes gateways over by their address: give each its egressIP`,
    };
  }
  if (mixesFamilies(p)) {
    return {
      code: "INVALID_INPUT",
      text:
        `its gateways name IPv4 and IPv6 egressIPs; Cilium SNATs each family's traffic to an egressIP of that ` +
        `family, and this package keeps each family's gateways in a policy of its own: split it in two first`,
    };
  }
  const want = scopeOf(config, policyFamily(p));
  const theirs = { destinations: p.destinations, excluded: p.excluded };
  if (JSON.stringify(theirs) !== JSON.stringify(want)) {
    return {
      code: "SCOPE_CONFLICT",
      text:
        `it sends ${describeScope(theirs)} and the provisioner asks for ${describeScope(want)}; adopt takes the ` +
        `policy over as it is: set destinations: ${JSON.stringify(theirs.destinations)}` +
        `${theirs.excluded.length > 0 ? ` and excluded: ${JSON.stringify(theirs.excluded)}` : " and no excluded"} ` +
        `on the provisioner (pulumi-egress-ipam import writes them so)`,
    };
  }
  return undefined;
}

/**
 * Refuses, at preview, what `adopt: true` cannot take over for `ns` as it is: a policy written by
 * hand (not managed by this package) that serves the namespace and other namespaces too, names a
 * gateway without egressIP, or sends other destinations than the provisioner's; and two policies
 * serving it (its gateways must end up in one). `holder` names the adopting resource in messages.
 * @throws IpamError SCOPE_CONFLICT, ADDRESS_IN_USE or INVALID_INPUT naming the policy, the problem and what to do.
 */
export async function refuseUnadoptable(
  kube: KubeClients,
  policies: CiliumPolicyFacts[],
  ns: NamespaceFacts,
  config: CiliumProvisionerConfig,
  holder: string,
): Promise<void> {
  const serving = policies.filter((p) => servesNamespace(p, ns) && p.gateways.length > 0);
  const theirs = serving.filter((p) => !isManaged(p.labels));
  if (theirs.length === 0) return;
  for (const family of [4, 6] as const) {
    const same = serving.filter((p) => !mixesFamilies(p) && policyFamily(p) === family);
    if (same.length > 1 && same.some((p) => !isManaged(p.labels))) {
      throw new IpamError(
        "SCOPE_CONFLICT",
        `${holder} adopts the addresses of namespace ${ns.name}, and CiliumEgressGatewayPolicies ` +
          `${same.map((p) => p.name).join(", ")} all send its Pods out through IPv${family} gateways: a ` +
          `namespace's gateways of one family are one policy's; merge them into one policy first`,
      );
    }
  }
  const all = await listNamespaceFacts(
    kube,
    "which ones a CiliumEgressGatewayPolicy written by hand selects",
  );
  for (const p of theirs) {
    const why = whyNot(p, ns.name, all, config);
    if (why) {
      throw new IpamError(
        why.code,
        `${holder} adopts the addresses of namespace ${ns.name}, and cannot take CiliumEgressGatewayPolicy ` +
          `${p.name} over: ${why.text}`,
      );
    }
  }
}

/**
 * The policy that is to hold `ip` of `namespace`: the namespace's own (see
 * {@link namespacePolicyName}) when this package manages it, or with `adopting` the policy written
 * by hand that has `ip` as a gateway, else the one serving the namespace alone (another address of
 * the namespace joins the policy adopted beside it). Refused unless it can be taken over as it is.
 * @throws IpamError naming the policy and the problem (see {@link refuseUnadoptable}).
 */
export async function takeoverTarget(
  kube: KubeClients,
  policies: CiliumPolicyFacts[],
  namespace: string,
  ip: string,
  adopting: boolean,
  config: CiliumProvisionerConfig,
  podSelector?: Record<string, string>,
): Promise<{ name: string; takeOver: boolean }> {
  const family = addressFamily(ip);
  const own = namespacePolicyName(policies, namespace, { family, podSelector });
  const existing = policies.find((p) => p.name === own);
  // A pod selector's policy is its own: adopt takes over what serves the whole namespace.
  if (!adopting || podSelector || (existing && isManaged(existing.labels)))
    return { name: own, takeOver: false };
  const unmanaged = policies.filter(
    (p) => !isManaged(p.labels) && p.gateways.length > 0 && policyFamily(p) === family,
  );
  const all = await listNamespaceFacts(
    kube,
    "which ones a CiliumEgressGatewayPolicy written by hand selects",
  );
  const holder =
    unmanaged.find((p) => p.gateways.some((g) => g.ip === ip)) ??
    unmanaged.find((p) => p.gateways.some((g) => g.ip) && served(p, all).join() === namespace);
  if (!holder) return { name: own, takeOver: false };
  const why = whyNot(holder, namespace, all, config);
  if (why) {
    throw new IpamError(
      why.code,
      `cannot adopt ${ip} for namespace ${namespace} from CiliumEgressGatewayPolicy ${holder.name}: ${why.text}`,
    );
  }
  return { name: holder.name, takeOver: true };
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * The spec of an adopted policy with these gateways (in order): its selectors and every other
 * field as they are; a gateway entry kept as written while it names the same address and Node, a
 * gateway pinned anew by `kubernetes.io/hostname`; `egressGateway` and `egressGateways` written
 * only when the gateways change; destinations and excluded the provisioner's (refused at preview
 * when they differ, see {@link refuseUnadoptable}).
 */
export function adoptedSpec(
  current: Record<string, unknown>,
  gateways: CiliumGateway[],
  config: CiliumProvisionerConfig,
  family: 4 | 6 = 4,
): Record<string, unknown> {
  const raw = gatewayEntries(current);
  const pinnedTo = (e: Record<string, unknown>) =>
    (e.nodeSelector as { matchLabels?: Record<string, string> } | undefined)?.matchLabels?.[hostnameLabel];
  const entries = gateways.map(
    (g) =>
      raw.find((e) => entryAddress(e) === g.ip && pinnedTo(e) === g.node) ?? {
        nodeSelector: { matchLabels: { [hostnameLabel]: g.node } },
        egressIP: g.ip,
      },
  );
  const spec: Record<string, unknown> = { ...current };
  if (!sameJson(entries, raw)) {
    spec.egressGateway = entries[0];
    spec.egressGateways = entries;
  }
  const scope = scopeOf(config, family);
  if (!sameJson(current.destinationCIDRs, scope.destinations)) spec.destinationCIDRs = scope.destinations;
  const excluded = Array.isArray(current.excludedCIDRs) ? current.excludedCIDRs : [];
  if (!sameJson(excluded, scope.excluded)) {
    if (scope.excluded.length > 0) spec.excludedCIDRs = scope.excluded;
    else delete spec.excludedCIDRs;
  }
  return spec;
}

/**
 * The write that gives the namespace's policy of `selection` `current` (undefined: none yet) these
 * gateways and the owner record `record`: created as {@link ciliumObjectName}; ours, patched to
 * the spec the kind writes; taken over now (`target.takeOver`) or before (annotated with the
 * namespace), labelled ours and annotated, everything else kept (see {@link adoptedSpec}). Never a
 * delete: the caller deletes a policy without gateways.
 * @throws IpamError NOT_FOUND when a policy adopted (or being adopted) was deleted meanwhile.
 */
export function policyWrite(
  current: KubeObject | undefined,
  target: { name: string; takeOver: boolean },
  namespace: string,
  gateways: CiliumGateway[],
  record: string | null,
  config: CiliumProvisionerConfig,
  doing: string,
  selection: PolicySelection = {},
): Edit {
  const spec = policySpec(namespace, gateways, scopeOf(config, selection.family), selection.podSelector);
  if (!current) {
    const own = ciliumObjectName(namespace, selection);
    if (target.name !== own) {
      throw new IpamError(
        "NOT_FOUND",
        `${doing}: CiliumEgressGatewayPolicy ${target.name}, which serves namespace ${namespace}, was deleted ` +
          `meanwhile; run pulumi up again (it then writes ${own})`,
      );
    }
    const { excludedCIDRs, ...rest } = spec;
    return {
      create: {
        metadata: {
          name: target.name,
          labels: managedBy,
          ...(record === null ? {} : { annotations: { [ownersAnnotation]: record } }),
        },
        spec: excludedCIDRs ? spec : rest,
      } as KubeObject,
    };
  }
  const annotations = current.metadata?.annotations ?? {};
  const takenOver = target.takeOver && !isManaged(current.metadata?.labels ?? {});
  if (!takenOver && annotations[adoptedForAnnotation] !== namespace) {
    return {
      mergePatch: { metadata: { labels: managedBy, annotations: { [ownersAnnotation]: record } }, spec },
    };
  }
  // Everything else on the object stays as it is: a whole replace carrying the resourceVersion read
  // (a merge patch would merge a gateway's new nodeSelector into the one it had).
  const { [ownersAnnotation]: _old, ...others } = annotations;
  return {
    replace: {
      ...current,
      metadata: {
        ...current.metadata,
        labels: { ...current.metadata?.labels, ...managedBy },
        annotations: {
          ...others,
          ...(record === null ? {} : { [ownersAnnotation]: record }),
          [adoptedForAnnotation]: namespace,
        },
      },
      spec: adoptedSpec((current.spec ?? {}) as Record<string, unknown>, gateways, config, selection.family),
    },
  };
}
