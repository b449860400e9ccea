import { canonicalAddress, canonicalCidr } from "../../allocator";
import type { EgressIPProvisioner } from "../egress-ip-provisioner";
import { editAddressList } from "./address-lists";
import { addressesWithin, hostSubnetRef, readEgressView, viewAddresses } from "./egress-view";
import { netNamespacePlacements } from "./placements";
import { plannerFor } from "./node-planner";
import type { OcpDynamicProvisionerConfig } from "./kube-provisioner-config";
import { refuseForeignSdn, sdnWrites } from "./sdn-writes";

/** The host an `ocp-dynamic` egress IP shows: the SDN master picks the node among those with egressCIDRs. */
export const automaticHost = "(automatic)";

/**
 * The `ocp-dynamic` provisioner (OpenShift SDN, automatic mode). For an EgressIp (`config.namespace`
 * set by the runtime) it writes only `NetNamespace.egressIPs`, and its host is
 * {@link automaticHost}: the SDN master places the address on a node whose HostSubnet has an
 * `egressCIDRs` entry containing it. For a CidrAssignment (`config.cidrs` set) it puts the pool's
 * CIDRs on `HostSubnet.egressCIDRs` of the chosen nodes (least loaded eligible node of the domain,
 * by egressCIDRs count) and takes them off again on delete.
 */
export function ocpDynamicProvisioner(
  config: OcpDynamicProvisionerConfig & { namespace?: string; cidrs?: string[] },
): EgressIPProvisioner {
  const planner = plannerFor(config);
  const { kube, nodes } = planner;
  const namespace = config.namespace;
  const cidrs = (config.cidrs ?? []).map((c) => canonicalCidr(c));

  const ns = (doing: string): string => {
    if (!namespace) {
      throw new Error(
        `${doing}: the ocp-dynamic provisioner puts egress IPs on the namespace's NetNamespace, and no namespace ` +
          `was given: set the EgressIp's namespace`,
      );
    }
    return namespace;
  };

  const writes = sdnWrites(kube);
  const netNamespace = (ip: string, change: "add" | "remove", signal?: AbortSignal) => {
    const name = ns(`${change === "add" ? "adding" : "removing"} ${ip}`);
    return change === "add"
      ? writes.onNetNamespace(ip, name, signal)
      : writes.offNetNamespace(ip, name, signal);
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

  const egressCidrs = (host: string, change: "add" | "remove", signal?: AbortSignal) =>
    editAddressList(
      kube,
      hostSubnetRef(host),
      "egressCIDRs",
      `${change === "add" ? "adding" : "removing"} egressCIDRs ${cidrs.join(", ")} on HostSubnet ${host}`,
      (list) => {
        const next =
          change === "add"
            ? [...list, ...cidrs.filter((c) => !list.includes(c))]
            : list.filter((c) => !cidrs.includes(c));
        return next;
      },
      change === "add" ? "OpenShift SDN makes one per node: is the node part of the SDN?" : undefined,
      undefined,
      signal,
    );

  return {
    findHostForNewIP: (zone, signal) => choose(zone, signal),
    hostServes: async () => true,

    async addSpecifiedIP(rawIp, _host, signal) {
      const ip = canonicalAddress(rawIp);
      const name = ns(`adding ${ip}`);
      const view = await readEgressView(kube);
      refuseForeignSdn(ip, undefined, name, view);
      await netNamespace(ip, "add", signal);
    },

    async addRandomIP(host) {
      throw new Error(
        `the ocp-dynamic provisioner cannot pick an address for ${host}: give the EgressIp a pool, which plans it`,
      );
    },

    removeIP: (rawIp, _host, signal) => netNamespace(canonicalAddress(rawIp), "remove", signal),
    moveIP: (rawIp, _old, _new, signal) => netNamespace(canonicalAddress(rawIp), "add", signal),

    async checkIP(rawIp) {
      const ip = canonicalAddress(rawIp);
      const name = ns(`checking ${ip}`);
      const view = await readEgressView(kube);
      if (!(view.netNamespaces.get(name) ?? []).includes(ip)) {
        throw new Error(`egress IP ${ip} is not on NetNamespace ${name}; run pulumi up to put it back`);
      }
    },

    async assignCIDR(host, signal) {
      if (cidrs.length === 0)
        throw new Error(`assigning egress CIDRs to ${host}: no CIDRs given (use a CidrAssignment)`);
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
  };
}
