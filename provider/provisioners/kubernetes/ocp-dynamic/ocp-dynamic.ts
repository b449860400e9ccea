import { IpamError } from "../../../core/ipam-error";
import { canonicalAddress, canonicalCidr } from "../../../allocator";
import type { EgressIPProvisioner } from "../../egress-ip-provisioner";
import { editObject, readObject } from "../../../kube/object-edit";
import {
  addressesWithin,
  addressList,
  hostSubnetRef,
  netNamespaceRef,
  readEgressView,
  viewAddresses,
} from "../egress-view";
import { readOwners, refuseTakenOver, withOwner, withOwners, withoutOwner } from "../owners";
import { netNamespacePlacements } from "../placements";
import { plannerFor } from "../node-planner";
import type { OcpDynamicProvisionerConfig } from "../../config/kube-provisioner-config";
import type { AdoptPresent, InstanceSettings } from "../../egress-ip-provisioner";
import { refuseForeignSdn, sdnWrites } from "../sdn-writes";
import { clusterView } from "../../../kube/cluster-identity";
import { namespaceAddressesOf } from "../namespace-addresses";

/** The host an `ocp-dynamic` egress IP shows: the SDN master picks the node among those with egressCIDRs. */
export const automaticHost = "(automatic)";

/**
 * The `ocp-dynamic` provisioner (OpenShift SDN, automatic mode). For an EgressIp (`config.namespace`
 * set by the runtime) it writes only `NetNamespace.egressIPs`, and its host is
 * {@link automaticHost}: the SDN master places the address on a node whose HostSubnet has an
 * `egressCIDRs` entry containing it. For a CidrAssignment (`config.cidrs` set) it puts the pool's
 * CIDRs on `HostSubnet.egressCIDRs` of the chosen nodes (least loaded eligible node of the domain,
 * by egressCIDRs count) and takes them off again on delete — only those no other CidrAssignment
 * still holds there and that were not there before (the owner record, `egress-ipam/owners`).
 */
export function ocpDynamicProvisioner(
  config: OcpDynamicProvisionerConfig & InstanceSettings,
): EgressIPProvisioner {
  const planner = plannerFor(config);
  const { kube, nodes } = planner;
  const namespace = config.namespace;
  const cidrs = (config.cidrs ?? []).map((c) => canonicalCidr(c));
  const owner = config.owner;

  const ns = (doing: string): string => {
    if (!namespace) {
      throw new IpamError(
        "INVALID_INPUT",
        `${doing}: the ocp-dynamic provisioner puts egress IPs on the namespace's NetNamespace, and no namespace ` +
          `was given: set the EgressIp's namespace`,
      );
    }
    return namespace;
  };

  const writes = sdnWrites(kube);
  /** `adopt` as in the NetNamespace claim of sdnWrites; without an owner (callers of an earlier version) no record. */
  const netNamespace = (ip: string, change: "add" | "remove", signal?: AbortSignal, adopt?: AdoptPresent) => {
    const name = ns(`${change === "add" ? "adding" : "removing"} ${ip}`);
    const claim = owner ? { owner, adopt } : undefined;
    return change === "add"
      ? writes.onNetNamespace(ip, name, signal, claim)
      : writes.offNetNamespace(ip, name, owner, signal).then(() => undefined);
  };

  /** Where a new egress IP goes: a real node for a CidrAssignment, the SDN master for an EgressIp. */
  const choose = async (zone: string, signal?: AbortSignal): Promise<string> => {
    const eligible = await nodes.eligible(zone, signal);
    if (eligible.length === 0) throw await nodes.noHost(zone, undefined, signal);
    const view = await planner.egressView();
    // An EgressIp's address is placed by the SDN master; its NetNamespace may not exist yet (a
    // namespace created in the same deployment): the write waits for it.
    if (cidrs.length === 0) return automaticHost;
    const withSubnet = eligible.filter((n) => view.hostSubnets.has(n.name));
    if (withSubnet.length === 0) {
      const skipped = new Map(
        eligible.map((n) => [n.name, "no HostSubnet: OpenShift SDN does not manage it"]),
      );
      throw await nodes.noHost(zone, skipped, signal);
    }
    const load = (name: string) => view.hostSubnets.get(name)?.egressCIDRs.length ?? 0;
    return withSubnet.reduce((a, b) =>
      load(b.name) < load(a.name) || (load(b.name) === load(a.name) && b.name < a.name) ? b : a,
    ).name;
  };

  /**
   * Puts the pool's CIDRs on the node's HostSubnet.egressCIDRs, or takes them off, keeping the owner
   * record (see `egress-ipam/owners`): a CIDR goes only when no other CidrAssignment that put it
   * there is left and it was not there before. One replace carrying the resourceVersion read.
   */
  const egressCidrs = (host: string, change: "add" | "remove", signal?: AbortSignal) => {
    const doing = `${change === "add" ? "adding" : "removing"} egressCIDRs ${cidrs.join(", ")} on HostSubnet ${host}`;
    return editObject(
      kube,
      hostSubnetRef(host),
      doing,
      (current) => {
        if (!current) {
          if (change === "remove") return undefined;
          throw new IpamError(
            "NOT_FOUND",
            `${doing}: HostSubnet ${host} does not exist on ${kube.server} (context "${kube.context}"); ` +
              `OpenShift SDN makes one per node: is the node part of the SDN?`,
          );
        }
        const before = addressList(current, "egressCIDRs");
        let owners = readOwners(current, before);
        let after = before;
        for (const cidr of cidrs) {
          if (change === "add") {
            if (owner)
              owners = withOwner(owners, cidr, owner, before.includes(cidr), config.adoptPresent === true);
            if (!after.includes(cidr)) after = [...after, cidr];
          } else {
            const next = withoutOwner(owners, cidr, owner);
            owners = next.owners;
            if (next.takeOff) after = after.filter((c) => c !== cidr);
          }
        }
        return withOwners(current, owners, { egressCIDRs: after.length > 0 ? after : undefined });
      },
      undefined,
      signal,
    );
  };

  return {
    findHostForNewIP: (zone, signal) => choose(zone, signal),
    hostServes: async () => true,
    cluster: () => clusterView(planner.kube),

    async addSpecifiedIP(rawIp, _host, signal) {
      const ip = canonicalAddress(rawIp);
      const name = ns(`adding ${ip}`);
      const view = await readEgressView(kube);
      refuseForeignSdn(ip, undefined, name, view);
      await netNamespace(ip, "add", signal, config.adoptPresent);
    },

    async addRandomIP(host) {
      throw new IpamError(
        "INVALID_INPUT",
        `the ocp-dynamic provisioner cannot pick an address for ${host}: give the EgressIp a pool, which plans it`,
      );
    },

    removeIP: (rawIp, _host, signal) => netNamespace(canonicalAddress(rawIp), "remove", signal),
    // A move is an update: never of another owner's address.
    moveIP: (rawIp, _old, _new, signal) =>
      netNamespace(canonicalAddress(rawIp), "add", signal, config.adoptPresent ?? "unrecorded"),

    async checkIP(rawIp) {
      const ip = canonicalAddress(rawIp);
      const name = ns(`checking ${ip}`);
      const view = await readEgressView(kube);
      const listed = view.netNamespaces.get(name) ?? [];
      if (!listed.includes(ip)) {
        throw new IpamError(
          "DRIFT",
          `egress IP ${ip} is not on NetNamespace ${name}; run pulumi up to put it back`,
        );
      }
      const record = readOwners(await readObject(kube, netNamespaceRef(name)), listed);
      refuseTakenOver(record, ip, owner, `NetNamespace ${name}`);
    },

    async assignCIDR(host, signal) {
      if (cidrs.length === 0)
        throw new IpamError(
          "INVALID_INPUT",
          `assigning egress CIDRs to ${host}: no CIDRs given (use a CidrAssignment)`,
        );
      await egressCidrs(host, "add", signal);
      planner.invalidate();
    },
    async unassignCIDR(host, signal) {
      await egressCidrs(host, "remove", signal);
      planner.invalidate();
    },

    async usedAddresses(within) {
      return addressesWithin(viewAddresses(await readEgressView(kube)), within);
    },

    placements: (within) => netNamespacePlacements(kube, within, automaticHost),
    placementOwners: "named",
    namespaceAddresses: (name, signal) => namespaceAddressesOf(planner, name, () => automaticHost, signal),
  };
}
