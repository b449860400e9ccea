import { IpamError } from "../../core/ipam-error";
import type { KubeClients } from "../../kube/kube-config";
import { readObject } from "../../kube/object-edit";
import { ciliumObjectName, isManaged, policyRef } from "./cilium-policy";
import type { CiliumProvisionerConfig } from "./kube-provisioner-config";
import { readOwners, thereBefore } from "./owners";

// A namespace's gateways share one CiliumEgressGatewayPolicy, and every pin and removal writes its
// destinationCIDRs and excludedCIDRs whole. Two EgressIps (or two stacks) asking one namespace's
// policy for different destinations would rewrite each other's at every up, and each one's refresh
// would find drift: so they are refused at preview, naming both.

/** What a policy sends through its gateways. */
export interface PolicyScope {
  destinations: string[];
  excluded: string[];
}

/** The scope a config writes (as `policySpec` writes it). */
export function scopeOf(config: CiliumProvisionerConfig): PolicyScope {
  return { destinations: config.destinations ?? ["0.0.0.0/0"], excluded: config.excluded ?? [] };
}

/** `destinations 0.0.0.0/0 excluding 10.0.0.0/8`, for messages. */
export function describeScope(s: PolicyScope): string {
  const excluding = s.excluded.length > 0 ? ` excluding ${s.excluded.join(", ")}` : "";
  return `destinations ${s.destinations.join(", ") || "(none)"}${excluding}`;
}

/** Whether two scopes send the same (in the same order). */
export const sameScope = (a: PolicyScope, b: PolicyScope): boolean =>
  JSON.stringify([a.destinations, a.excluded]) === JSON.stringify([b.destinations, b.excluded]);

/**
 * The scope the first EgressIp checked asked of each namespace's policy, by API server and
 * namespace. A dynamic provider runs one process per deployment, so this is the deployment's.
 */
const asked = new Map<string, { holder: string; scope: PolicyScope }>();

const advice = (namespace: string) =>
  `a namespace's gateways share one CiliumEgressGatewayPolicy (${ciliumObjectName(namespace)}), and each ` +
  `write would set its destinations in turn: give every EgressIp of namespace ${namespace} the same ` +
  `destinations and excluded, or put the workloads that need other destinations in another namespace`;

/**
 * Refuses a scope for `namespace`'s policy that differs from what another EgressIp of this
 * deployment asks (naming both), or from the live policy's when that carries gateways recorded for
 * another stack (naming its owners). `holder` names this assignment's resource (`EgressIp team-a`);
 * `owner` is its owner record (`<stack identity> <URN>`); `policyName` the namespace's policy (one
 * taken over by adopt has its own name).
 * @throws IpamError SCOPE_CONFLICT naming both holders, both scopes and what to do.
 */
export async function refuseSplitScope(
  kube: KubeClients,
  namespace: string,
  config: CiliumProvisionerConfig,
  holder: string,
  owner: string | undefined,
  policyName: string = ciliumObjectName(namespace),
): Promise<void> {
  const scope = scopeOf(config);
  const key = `${kube.server} ${namespace}`;
  const first = asked.get(key);
  if (!first) asked.set(key, { holder, scope });
  else if (first.holder !== holder && !sameScope(first.scope, scope)) {
    throw new IpamError(
      "SCOPE_CONFLICT",
      `${holder} asks for ${describeScope(scope)} in namespace ${namespace}, and ${first.holder} for ` +
        `${describeScope(first.scope)}: ${advice(namespace)}`,
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
      `(${others.slice(0, 3).join(", ")}${others.length > 3 ? ", …" : ""}): ${advice(namespace)}; to change ` +
      `the scope the stacks share, take the other stacks' EgressIps of namespace ${namespace} out (pulumi up ` +
      `there), change it here, and give them the new destinations`,
  );
}
