/** The namespace label a namespaceSelector matches one namespace by (set by Kubernetes itself). */
export const namespaceNameLabel = "kubernetes.io/metadata.name";

/**
 * On an object taken over by `adopt` (an OVN EgressIP, an Antrea Egress, a Cilium policy whose name
 * is not the one this package gives it): the namespace it serves.
 */
export const adoptedForAnnotation = "egress-ipam/namespace";
