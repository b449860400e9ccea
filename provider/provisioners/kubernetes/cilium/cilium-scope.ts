import { IpamError } from "../../../core/ipam-error";
import type { KubeClients } from "../../../kube/kube-config";
import { readObject } from "../../../kube/object-edit";
import { ciliumObjectName, isManaged, policyRef } from "./cilium-policy";
import { describeScope, sameScope, scopeOf, type PolicyScope } from "./cilium-destinations";
import type { CiliumProvisionerConfig } from "../../config/kube-provisioner-config";
import { readOwners, thereBefore } from "../owners";

// A namespace's gateways of one family and pod selection share one CiliumEgressGatewayPolicy, and
// every pin and removal writes its destinationCIDRs and excludedCIDRs whole. Two EgressIps (or two
// stacks) asking one policy for different destinations would rewrite each other's at every up, and
// each one's refresh would find drift: so they are refused at preview, naming both.

export { describeScope, sameScope, scopeOf, type PolicyScope } from "./cilium-destinations";

/**
 * The scope the first EgressIp checked asked of each policy, by API server and policy name. A
 * dynamic provider runs one process per deployment, so this is the deployment's.
 */
const asked = new Map<string, { holder: string; scope: PolicyScope }>();

const advice = (namespace: string, policyName: string) =>
  `a namespace's gateways share one CiliumEgressGatewayPolicy per family and pod selection (${policyName}), ` +
  `and each write would set its destinations in turn: give every EgressIp of namespace ${namespace} with ` +
  `that selection the same destinations and excluded, or put the workloads that need other destinations ` +
  `in another namespace`;

/**
 * Refuses a scope for the policy `policyName` (of `namespace`, its gateways of `family`) that
 * differs from what another EgressIp of this deployment asks of it (naming both), or from the live
 * policy's when that carries gateways recorded for another stack (naming its owners). `holder`
 * names this assignment's resource (`EgressIp team-a`); `owner` is its owner record (`<stack
 * identity> <URN>`); `policyName` the policy (one taken over by adopt has its own name).
 * @throws IpamError SCOPE_CONFLICT naming both holders, both scopes and what to do.
 */
export async function refuseSplitScope(
  kube: KubeClients,
  namespace: string,
  config: CiliumProvisionerConfig,
  holder: string,
  owner: string | undefined,
  policyName: string = ciliumObjectName(namespace),
  family: 4 | 6 = 4,
): Promise<void> {
  const scope = scopeOf(config, family);
  const key = `${kube.server} ${policyName}`;
  const first = asked.get(key);
  if (!first) asked.set(key, { holder, scope });
  else if (first.holder !== holder && !sameScope(first.scope, scope)) {
    throw new IpamError(
      "SCOPE_CONFLICT",
      `${holder} asks for ${describeScope(scope)} in namespace ${namespace}, and ${first.holder} for ` +
        `${describeScope(first.scope)}: ${advice(namespace, policyName)}`,
    );
  }
  const live = await readObject(kube, policyRef(policyName));
  if (!live || !isManaged(live.metadata?.labels ?? {})) return;
  const spec = (live.spec ?? {}) as { destinationCIDRs?: unknown; excludedCIDRs?: unknown };
  const strings = (v: unknown) =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
  const written = { destinations: strings(spec.destinationCIDRs), excluded: strings(spec.excludedCIDRs) };
  if (sameScope(written, scope)) return;
  const identity = owner?.split(" ")[0];
  const records = Object.values(readOwners(live, [])).flat();
  const others = [...new Set(records.filter((o) => o !== thereBefore && o.split(" ")[0] !== identity))];
  if (others.length === 0) return;
  throw new IpamError(
    "SCOPE_CONFLICT",
    `${holder} asks for ${describeScope(scope)} in namespace ${namespace}, and CiliumEgressGatewayPolicy ` +
      `${policyName} sends ${describeScope(written)} through gateways of another stack ` +
      `(${others.slice(0, 3).join(", ")}${others.length > 3 ? ", …" : ""}): ${advice(namespace, policyName)}; to change ` +
      `the scope the stacks share, take the other stacks' EgressIps of namespace ${namespace} out (pulumi up ` +
      `there), change it here, and give them the new destinations`,
  );
}
