/** The type prefix of this package's dynamic resources (TypeScript programs): `pulumi-nodejs:dynamic/egress-ipam:<Kind>`. */
export const dynamicTypePrefix = "pulumi-nodejs:dynamic/egress-ipam:";
/** The type prefix of the plugin's resources (programs in any language): `egress-ipam:index:<Kind>`. */
export const pluginTypePrefix = "egress-ipam:index:";

/**
 * The kind of a resource of this package (`IpAllocation`, …) from its type token, served as a
 * dynamic resource or by the plugin; undefined for any other type. The one place that says which
 * resources in a checkpoint are this package's.
 */
export function ownKind(type: string): string | undefined {
  for (const prefix of [dynamicTypePrefix, pluginTypePrefix]) {
    if (type.startsWith(prefix)) return type.slice(prefix.length);
  }
  return undefined;
}

/** Whether a resource is an EgressIp's child (in a program of any language): its URN's parent type is EgressIp. */
export function madeByEgressIp(urn: string): boolean {
  return (urn.split("::")[2] ?? "").split("$").at(-2) === `${pluginTypePrefix}EgressIp`;
}
