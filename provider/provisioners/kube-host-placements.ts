import type { KubeClients } from "../kube/kube-config";
import { listObjects } from "../kube/object-edit";
import type { Placement } from "./egress-ip-provisioner";
import { addressesWithin, api, readOvnEgressIp } from "./kube-egress-view";
import { listedAddresses, removalCommand, type AddressListAt } from "./kube-removal";

// What `pulumi-egress-ipam check` sees of the Kubernetes provisioners: where each egress address
// inside the pools' subnets is, read from the same objects the provisioners write, each with the
// kubectl command that takes a leaked one off again.

const hostSubnets = (kube: KubeClients) =>
  listObjects(kube, api.openshiftNetwork, "HostSubnet").then((l) =>
    l.map((object): AddressListAt => ({
      resource: "hostsubnet.network.openshift.io",
      object,
      path: "/egressIPs",
    })),
  );
const netNamespaces = (kube: KubeClients) =>
  listObjects(kube, api.openshiftNetwork, "NetNamespace").then((l) =>
    l.map((object): AddressListAt => ({
      resource: "netnamespace.network.openshift.io",
      object,
      path: "/egressIPs",
    })),
  );

/**
 * Each address of `lists` inside `cidrs`, with the command removing it from its list (off the host)
 * and from every list of `alsoIn` that has it (a leaked address's other traces).
 */
function seenIn(
  lists: AddressListAt[],
  cidrs: string[],
  hostOf: (at: AddressListAt, ip: string) => Omit<Placement, "ip">,
  alsoIn: AddressListAt[],
  context: string,
): Placement[] {
  return lists.flatMap((at) =>
    addressesWithin(listedAddresses(at), cidrs).map((ip) => {
      const offHost = removalCommand(at, ip, context)!;
      const traces = alsoIn.flatMap((l) => removalCommand(l, ip, context) ?? []);
      return {
        ip,
        ...hostOf(at, ip),
        removeCommand: [offHost, ...traces].join(" && "),
        offHostCommand: offHost,
      };
    }),
  );
}

/**
 * OpenShift SDN manual mode (`ocp-static`): an address on a node's `HostSubnet.egressIPs` is on that
 * node. Taking a leaked one off removes it from its NetNamespace too (a namespace whose egress IP
 * is on no node has its egress traffic dropped); a misplaced one keeps its NetNamespace entry.
 */
export async function hostSubnetPlacements(kube: KubeClients, cidrs: string[]): Promise<Placement[]> {
  const [subnets, spaces] = await Promise.all([hostSubnets(kube), netNamespaces(kube)]);
  return seenIn(subnets, cidrs, (at) => ({ host: at.object.metadata?.name ?? "" }), spaces, kube.context);
}

/**
 * OpenShift SDN automatic mode (`ocp-dynamic`): an address on a `NetNamespace.egressIPs` is placed by
 * the SDN master, so its host is `automaticHost`; the node whose HostSubnet shows it is an alias.
 */
export async function netNamespacePlacements(
  kube: KubeClients,
  cidrs: string[],
  automaticHost: string,
): Promise<Placement[]> {
  const [subnets, spaces] = await Promise.all([hostSubnets(kube), netNamespaces(kube)]);
  const nodesOf = (ip: string) =>
    subnets.filter((s) => listedAddresses(s).includes(ip)).map((s) => s.object.metadata?.name ?? "");
  return seenIn(spaces, cidrs, (_, ip) => ({ host: automaticHost, aliases: nodesOf(ip) }), [], kube.context);
}

/**
 * OVN-Kubernetes (`ovn`): an address in an EgressIP's `spec.egressIPs` is on the node its
 * `status.items` names; one ovnkube has not placed yet is `awaitingHost`.
 */
export async function egressIpPlacements(kube: KubeClients, cidrs: string[]): Promise<Placement[]> {
  const objects = (await listObjects(kube, api.ovn, "EgressIP")).map((object): AddressListAt => ({
    resource: "egressip.k8s.ovn.org",
    object,
    path: "/spec/egressIPs",
  }));
  return seenIn(
    objects,
    cidrs,
    (at, ip) => {
      const node = readOvnEgressIp(at.object).status?.find((s) => s.egressIP === ip)?.node;
      return node
        ? { host: node, platformPlaced: true }
        : { host: "(not placed yet)", awaitingHost: true, platformPlaced: true };
    },
    [],
    kube.context,
  );
}
