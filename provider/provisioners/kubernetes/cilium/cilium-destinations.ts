import { parsePrefix } from "../../../allocator/prefix";
import type { CiliumProvisionerConfig } from "../../config/kube-provisioner-config";

// What a CiliumEgressGatewayPolicy sends through its gateways: `destinationCIDRs` minus
// `excludedCIDRs`. Cilium SNATs a family's traffic to an `egressIP` of that family (for the other
// family it takes the gateway interface's own address), so a namespace's IPv4 and IPv6 addresses
// are gateways of two policies, each sending its own family's part of the provisioner's
// `destinations` and `excluded`.

/** What a policy sends through its gateways. */
export interface PolicyScope {
  destinations: string[];
  excluded: string[];
}

/** Every destination of a family: what a policy sends when the provisioner gives no `destinations`. */
export const everyDestination = { 4: "0.0.0.0/0", 6: "::/0" } as const;

/**
 * The scope the policy of `family` is written with: the config's destinations and excluded of
 * that family, or every destination of it when the config gives none. An IPv4 policy of a config
 * with only IPv4 CIDRs (every one before dual stack) is as before.
 */
export function scopeOf(config: CiliumProvisionerConfig, family: 4 | 6 = 4): PolicyScope {
  const ofFamily = (cidrs: string[]) => cidrs.filter((c) => parsePrefix(c).family === family);
  return {
    destinations: config.destinations ? ofFamily(config.destinations) : [everyDestination[family]],
    excluded: ofFamily(config.excluded ?? []),
  };
}

/** `destinations 0.0.0.0/0 excluding 10.0.0.0/8`, for messages. */
export function describeScope(s: PolicyScope): string {
  const excluding = s.excluded.length > 0 ? ` excluding ${s.excluded.join(", ")}` : "";
  return `destinations ${s.destinations.join(", ") || "(none)"}${excluding}`;
}

/** Whether two scopes send the same (in the same order). */
export const sameScope = (a: PolicyScope, b: PolicyScope): boolean =>
  JSON.stringify([a.destinations, a.excluded]) === JSON.stringify([b.destinations, b.excluded]);
