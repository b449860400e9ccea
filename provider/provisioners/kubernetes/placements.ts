import type { KubeClients } from "../../kube/kube-config";
import { listObjects } from "../../kube/object-edit";
import type { Placement } from "../egress-ip-provisioner";
import { addressesWithin, api, readOvnEgressIp } from "./egress-view";
import { listedAddresses, removalCommand, type AddressListAt } from "./removal-commands";

// What `pulumi-egress-ipam check` sees of the Kubernetes provisioners: where each egress address
// inside the pools' subnets is, read from the same objects the provisioners write, each with the
// kubectl command that takes a leaked one off again.

/** Every object of a cluster-scoped kind, with the address list at `path` (kubectl names it `<kind>.<group>`). */
const listsOf = (kube: KubeClients, apiVersion: string, kind: string, path: string) =>
  listObjects(kube, apiVersion, kind).then((l) =>
    l.map((object): AddressListAt => ({
      resource: `${kind.toLowerCase()}.${apiVersion.split("/")[0]}`,
      object,
      path,
    })),
  );
const hostSubnets = (kube: KubeClients) => listsOf(kube, api.openshiftNetwork, "HostSubnet", "/egressIPs");
const netNamespaces = (kube: KubeClients) =>
  listsOf(kube, api.openshiftNetwork, "NetNamespace", "/egressIPs");

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
  const nodesOf = new Map<string, string[]>();
  for (const s of subnets) {
    for (const ip of listedAddresses(s))
      nodesOf.set(ip, [...(nodesOf.get(ip) ?? []), s.object.metadata?.name ?? ""]);
  }
  return seenIn(
    spaces,
    cidrs,
    (_, ip) => ({ host: automaticHost, aliases: nodesOf.get(ip) ?? [] }),
    [],
    kube.context,
  );
}

/**
 * OVN-Kubernetes (`ovn`): an address in an EgressIP's `spec.egressIPs` is on the node its
 * `status.items` names; one ovnkube has not placed yet is `awaitingHost`.
 */
export async function egressIpPlacements(kube: KubeClients, cidrs: string[]): Promise<Placement[]> {
  const objects = await listsOf(kube, api.ovn, "EgressIP", "/spec/egressIPs");
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
