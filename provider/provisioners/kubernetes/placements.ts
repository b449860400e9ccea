import type { KubeClients } from "../../kube/kube-config";
import { listObjects } from "../../kube/object-edit";
import type { Placement, PlatformStatus } from "../egress-ip-provisioner";
import { addressesWithin, api, readOvnEgressIp } from "./egress-view";
import { isManaged } from "./managed-by";
import { readOwners } from "./owners";
import { ovnPlatformStatus, platformWarnings } from "./platform-status";
import { listedAddresses, removalCommand, type AddressListAt } from "./removal-commands";

// What `pulumi-egress-ipam check` sees of the Kubernetes provisioners: where each egress address
// inside the pools' subnets is, read from the same objects the provisioners write, each with the
// owner record the provisioners' removeIP reads (`egress-ipam/owners`) and the kubectl command that
// takes a leaked one off again.

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
 * Who the owner records of `lists` name for each address they list (address → owners): the
 * `egress-ipam/owners` annotation of each object, read as removeIP reads it. `managedOnly`: only an
 * object with the managed-by label counts (OVN's EgressIP objects, which anybody may create).
 */
function recordsOf(lists: AddressListAt[], managedOnly: boolean): Map<string, string[]> {
  const records = new Map<string, string[]>();
  for (const at of lists) {
    if (managedOnly && !isManaged(at.object.metadata?.labels ?? {})) continue;
    const listed = listedAddresses(at);
    const owners = readOwners(at.object, listed);
    for (const ip of listed) if (owners[ip]) records.set(ip, owners[ip]);
  }
  return records;
}

/**
 * Each address of `lists` inside `cidrs`, with the owners `records` name for it, the command
 * removing it from its list (off the host) and from every list of `alsoIn` that has it (a leaked
 * address's other traces).
 */
function seenIn(
  lists: AddressListAt[],
  cidrs: string[],
  hostOf: (at: AddressListAt, ip: string) => Omit<Placement, "ip">,
  alsoIn: AddressListAt[],
  records: Map<string, string[]>,
  context: string,
): Placement[] {
  return lists.flatMap((at) =>
    addressesWithin(listedAddresses(at), cidrs).map((ip) => {
      const offHost = removalCommand(at, ip, context)!;
      const traces = alsoIn.flatMap((l) => removalCommand(l, ip, context) ?? []);
      const owners = records.get(ip);
      return {
        ip,
        ...hostOf(at, ip),
        removeCommand: [offHost, ...traces].join(" && "),
        offHostCommand: offHost,
        ...(owners ? { owners } : {}),
      };
    }),
  );
}

/**
 * OpenShift SDN manual mode (`ocp-static`): an address on a node's `HostSubnet.egressIPs` is on that
 * node, owned as its NetNamespace's record says. Taking a leaked one off removes it from its NetNamespace too (a namespace whose egress IP
 * is on no node has its egress traffic dropped); a misplaced one keeps its NetNamespace entry.
 */
export async function hostSubnetPlacements(kube: KubeClients, cidrs: string[]): Promise<Placement[]> {
  const [subnets, spaces] = await Promise.all([hostSubnets(kube), netNamespaces(kube)]);
  // The owner record is the NetNamespace's: a HostSubnet is the node's, shared by every namespace.
  const host = (at: AddressListAt) => ({ host: at.object.metadata?.name ?? "" });
  return seenIn(subnets, cidrs, host, spaces, recordsOf(spaces, false), kube.context);
}

/**
 * OpenShift SDN automatic mode (`ocp-dynamic`): an address on a `NetNamespace.egressIPs` is placed by
 * the SDN master, so its host is `automaticHost`; the node whose HostSubnet shows it is an alias,
 * and the master's report (`platform`). Owned as the NetNamespace's record says.
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
    (_, ip) => ({
      host: automaticHost,
      aliases: nodesOf.get(ip) ?? [],
      platform: sdnMasterStatus(nodesOf.get(ip)),
    }),
    [],
    recordsOf(spaces, false),
    kube.context,
  );
}

/**
 * OVN-Kubernetes (`ovn`): an address in an EgressIP's `spec.egressIPs` is on the node its
 * `status.items` names; one ovnkube has not placed yet is `awaitingHost`, with what ovnkube said
 * (`platform`: its status, its Warning events). Owned as the record of an
 * object of this package (its managed-by label) says: another's object records nobody we trust.
 */
export async function egressIpPlacements(kube: KubeClients, cidrs: string[]): Promise<Placement[]> {
  const [objects, warnings] = await Promise.all([
    listsOf(kube, api.ovn, "EgressIP", "/spec/egressIPs"),
    platformWarnings(kube, "EgressIP"),
  ]);
  return seenIn(
    objects,
    cidrs,
    (at, ip) => {
      const platform = ovnPlatformStatus(readOvnEgressIp(at.object), at.object, ip, warnings);
      return platform.state === "placed"
        ? { host: platform.node!, platformPlaced: true, platform }
        : { host: "(not placed yet)", awaitingHost: true, platformPlaced: true, platform };
    },
    [],
    recordsOf(objects, true),
    kube.context,
  );
}

/**
 * What the OpenShift SDN master reports about an address of automatic mode: the HostSubnet whose
 * egressIPs it wrote it into. None lists it: not confirmed (the master has not placed it yet, is not
 * running, or no node's egressCIDRs hold it); the SDN writes no other status to tell these apart.
 */
function sdnMasterStatus(nodes: string[] | undefined): PlatformStatus {
  if (nodes?.length) return { state: "placed", node: nodes.join(", ") };
  return {
    state: "unreported",
    why:
      "no HostSubnet lists it: the SDN master has not placed it (yet); it places an address only on a " +
      "node whose HostSubnet egressCIDRs hold it (CidrAssignment)",
  };
}
