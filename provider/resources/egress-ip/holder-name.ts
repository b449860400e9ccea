/**
 * How messages name an EgressIpAssignment's resource: `EgressIp team-a` for one an EgressIp made (its
 * URN's parent type is EgressIp and its name is the EgressIp's plus `-<failureDomain>`), else
 * `EgressIpAssignment <name>`.
 */
export function holderName(urn: string, failureDomain: string): string {
  const parts = urn.split("::");
  const types = (parts[2] ?? "").split("$");
  const name = parts.slice(3).join("::");
  const suffix = failureDomain === "" ? "" : `-${failureDomain}`;
  if (types.at(-2) === "egress-ipam:index:EgressIp" && name.endsWith(suffix))
    return `EgressIp ${name.slice(0, name.length - suffix.length)}`;
  return `EgressIpAssignment ${name}`;
}
