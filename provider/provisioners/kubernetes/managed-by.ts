/** The label on the objects this package owns (OVN EgressIPs, Cilium policies, Antrea Egresses). */
export const managedBy = { "app.kubernetes.io/managed-by": "pulumi-egress-ipam" };

/**
 * Whether an object's labels say this package owns it. Only such an object's owner record
 * (`egress-ipam/owners`) is believed: anybody may create an object of these kinds.
 */
export const isManaged = (labels: Record<string, string>): boolean =>
  labels["app.kubernetes.io/managed-by"] === managedBy["app.kubernetes.io/managed-by"];
