import { madeByEgressIp } from "../../core/resource-types";

/**
 * How messages name an EgressIpAssignment's resource: `EgressIp team-a` for one an EgressIp made (its
 * URN's parent type is EgressIp and its name is the EgressIp's plus `-<failureDomain>`, and `-ipv6`
 * for the IPv6 address of `families: "dual"` or `"ipv6"`), else `EgressIpAssignment <name>`. Every
 * assignment of one EgressIp gets the same name, so checks that compare holders see them as one.
 */
export function holderName(urn: string, failureDomain: string): string {
  const parts = urn.split("::");
  const name = parts.slice(3).join("::");
  const suffix = failureDomain === "" ? "" : `-${failureDomain}`;
  if (madeByEgressIp(urn)) {
    const base = [`${suffix}-ipv6`, suffix].find((s) => name.endsWith(s) && name.length > s.length);
    if (base !== undefined) return `EgressIp ${name.slice(0, name.length - base.length)}`;
  }
  return `EgressIpAssignment ${name}`;
}
