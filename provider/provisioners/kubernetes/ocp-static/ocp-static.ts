import { IpamError, codeOf } from "../../../core/ipam-error";
import { canonicalAddress } from "../../../allocator";
import { errorMessage } from "../../../core/failure";
import type { EgressIPProvisioner } from "../../egress-ip-provisioner";
import { compensated } from "../address-lists";
import { hostSubnetPlacements } from "../placements";
import {
  addressesWithin,
  netNamespaceRef,
  readEgressView,
  viewAddresses,
  type EgressView,
} from "../egress-view";
import { readObject } from "../../../kube/object-edit";
import { readOwners, refuseTakenOver } from "../owners";
import type { KubeNode } from "../nodes";
import { plannerFor, type AddressGroup, type AddressLocations } from "../node-planner";
import type { OcpStaticProvisionerConfig } from "../../config/kube-provisioner-config";
import type { AdoptPresent, InstanceSettings } from "../../egress-ip-provisioner";
import { refuseForeignSdn, sdnWrites, waitForNetNamespace, type NetNamespaceClaim } from "../sdn-writes";
import { clusterView } from "../../../kube/cluster-identity";
import { namespaceAddressesOf } from "../namespace-addresses";
import { nodeCloud } from "../node-cloud";

/** Where OpenShift SDN has egress IPs: on which node (HostSubnet) and for which namespace (NetNamespace). */
export function sdnLocations(view: EgressView): AddressLocations {
  const nodeOf = new Map<string, string>();
  const groupOf = new Map<string, string>();
  for (const [node, h] of view.hostSubnets) for (const ip of h.egressIPs) nodeOf.set(ip, node);
  for (const [ns, ips] of view.netNamespaces) for (const ip of ips) groupOf.set(ip, ns);
  return { nodeOf, groupOf };
}

/**
 * The `ocp-static` provisioner (OpenShift SDN, manual mode): an egress IP is on exactly one node's
 * `HostSubnet.egressIPs` and on its namespace's `NetNamespace.egressIPs`. `config.namespace` is the
 * namespace of the EgressIp served (the runtime adds it; see `withInstanceSettings`). Hosts are node
 * names; a Node with `egressCIDRs` (automatic mode) is never used, and no Node gets two addresses
 * of one namespace. With `cloud`, the address is a secondary IP of the node's EC2 instance first,
 * and that is undone when the HostSubnet write fails.
 */
export function ocpStaticProvisioner(
  config: OcpStaticProvisionerConfig & InstanceSettings,
): EgressIPProvisioner {
  const planner = plannerFor(config);
  const { kube, nodes } = planner;
  const namespace = config.namespace;
  const onCloud = nodeCloud(config.cloud, kube, config.owner, config.adoptPresent);
  const cloud = onCloud?.cloud;
  const instanceOf = (host: string) => onCloud!.instanceOf(host);

  const ns = (doing: string): string => {
    if (!namespace) {
      throw new IpamError(
        "INVALID_INPUT",
        `${doing}: the ocp-static provisioner puts egress IPs on the namespace's NetNamespace, and no namespace ` +
          `was given: set the EgressIp's namespace`,
      );
    }
    return namespace;
  };

  /** Why a Node cannot carry a manual egress IP, from the cluster's view ("" when it can). */
  const unusable = (view: EgressView) => (node: KubeNode) => {
    const hs = view.hostSubnets.get(node.name);
    if (!hs) return "no HostSubnet: OpenShift SDN does not manage it";
    if (hs.egressCIDRs.length > 0)
      return `its HostSubnet has egressCIDRs ${hs.egressCIDRs.join(", ")} (automatic mode)`;
    return onCloud?.unusable(node) ?? "";
  };

  /** The namespace's NetNamespace, whose egress IPs fail over between Nodes: one a Node. */
  const group = (zone: string): AddressGroup | undefined =>
    namespace
      ? {
          key: namespace,
          name: `NetNamespace ${namespace}`,
          rule:
            `OpenShift SDN fails a namespace's traffic over from one of its egress IPs to the next, so each is ` +
            `on a Node of its own: give failure domain "${zone}" another Node OpenShift SDN manages (a HostSubnet ` +
            `without egressCIDRs), or place fewer of ${namespace}'s addresses there`,
        }
      : undefined;

  const choose = async (zone: string, ip: string | undefined, signal?: AbortSignal) => {
    // A namespace without a NetNamespace yet (created in the same deployment) holds no addresses;
    // the write waits for the SDN master to make it.
    const view = await planner.egressView();
    return planner.choose(
      { zone, ip, group: group(zone), unusable: unusable(view), locations: sdnLocations(view) },
      signal,
    );
  };

  const { onHostSubnet, offHostSubnet, onNetNamespace, offNetNamespace } = sdnWrites(kube);
  /** This assignment's claim on its NetNamespace entry (none without an owner: callers of an earlier version). */
  const claim = (adopt: AdoptPresent | undefined): NetNamespaceClaim | undefined =>
    config.owner ? { owner: config.owner, adopt } : undefined;
  const refuseForeign = refuseForeignSdn;

  /** Puts the address on the node: cloud (when configured), then HostSubnet, then NetNamespace; undoes on failure. */
  const place = async (ip: string, host: string, name: string, view: EgressView, signal?: AbortSignal) => {
    const namespaceIps = view.netNamespaces.get(name) ?? [];
    // The undo takes off only what this call put on: an entry that was there already stays.
    const wasOnHost = view.hostSubnets.get(host)?.egressIPs.includes(ip) ?? false;
    const sdn = async () => {
      await onHostSubnet(ip, host, name, namespaceIps, signal);
      await compensated(
        () => onNetNamespace(ip, name, signal, claim(config.adoptPresent)),
        () => (wasOnHost ? Promise.resolve() : offHostSubnet(ip, host)),
        {
          step: `adding ${ip} to NetNamespace ${name}`,
          undone: wasOnHost
            ? `${ip} stays on HostSubnet ${host}, where it was before`
            : `${ip} was taken off HostSubnet ${host} again`,
          leftover: `${ip} is still on HostSubnet ${host} and on no NetNamespace: remove it there by hand`,
        },
      );
    };
    if (!cloud) return sdn();
    const instance = await instanceOf(host);
    await cloud.addSpecifiedIP(ip, instance, signal);
    await compensated(sdn, () => cloud.removeIP(ip, instance), {
      step: `putting ${ip} on HostSubnet ${host} after making it a secondary IP of instance ${instance}`,
      undone: `the secondary IP ${ip} was taken off instance ${instance} again`,
      leftover:
        `${ip} is still a secondary IP of instance ${instance} (node ${host}) and on no HostSubnet: run pulumi up ` +
        `again to finish, or remove it with aws ec2 unassign-private-ip-addresses`,
    });
  };

  return {
    findHostForNewIP: (zone, signal) => choose(zone, undefined, signal),
    cluster: () => clusterView(planner.kube),
    findHostForIP: (ip, zone, signal) => choose(zone, canonicalAddress(ip), signal),

    async hostServes(host, zone, signal) {
      if (!(await nodes.serves(host, zone, signal))) return false;
      const node = (await nodes.find(host, signal))!;
      return unusable(await planner.egressView())(node) === "";
    },

    async addSpecifiedIP(rawIp, host, signal) {
      const ip = canonicalAddress(rawIp);
      const name = ns(`putting ${ip} on node ${host}`);
      let view = await readEgressView(kube);
      if (!view.netNamespaces.has(name)) {
        await waitForNetNamespace(kube, name, signal);
        view = await readEgressView(kube);
      }
      refuseForeign(ip, host, name, view);
      await place(ip, host, name, view, signal);
      planner.record(ip, host, name);
    },

    async addRandomIP(host) {
      throw new IpamError(
        "INVALID_INPUT",
        `the ocp-static provisioner cannot pick an address for node ${host}: give the EgressIp a pool, which plans it`,
      );
    },

    async removeIP(rawIp, host, signal) {
      const ip = canonicalAddress(rawIp);
      // The NetNamespace's owner record says whose the address is now: one adopted since is the
      // adopter's, and stays on its HostSubnet (and instance) too.
      if (namespace && !(await offNetNamespace(ip, namespace, config.owner, signal))) return;
      await offHostSubnet(ip, host, signal);
      if (cloud) await cloud.removeIP(ip, await instanceOf(host), signal);
      planner.record(ip, undefined);
    },

    async moveIP(rawIp, oldHost, newHost, signal) {
      const ip = canonicalAddress(rawIp);
      const name = ns(`moving ${ip} to node ${newHost}`);
      const view = await readEgressView(kube);
      refuseForeign(ip, newHost, name, { ...view, hostSubnets: withoutHost(view, oldHost) });
      const namespaceIps = view.netNamespaces.get(name) ?? [];
      const moving = `moving ${ip} from HostSubnet ${oldHost} to ${newHost}`;
      // The order keeps the address on at most one HostSubnet whichever write fails (each write is
      // of one object, atomic): the NetNamespace first (it has the address unless it drifted, and a
      // failure there changes nothing), then off the old node (OpenShift SDN disables an address
      // that two HostSubnets claim), then onto the new one, whose failure puts it back on the old.
      try {
        // A move is an update: never of another owner's address.
        await onNetNamespace(ip, name, signal, claim(config.adoptPresent ?? "unrecorded"));
      } catch (err) {
        throw new IpamError(
          codeOf(err, "PROVISIONER_FAILED"),
          `${moving} failed: ${errorMessage(err)}; nothing was changed: ${ip} is on HostSubnet ${oldHost} only, as before`,
          { cause: err },
        );
      }
      await offHostSubnet(ip, oldHost, signal);
      const toNew = () => onHostSubnet(ip, newHost, name, namespaceIps, signal);
      // Undo writes run without the signal: an aborted move must still be put back.
      const back = () => onHostSubnet(ip, oldHost, name, []);
      const nowhere = `${ip} is on no HostSubnet (NetNamespace ${name} has it): run pulumi up again`;
      if (!cloud) {
        await compensated(toNew, [{ run: back, leftover: nowhere }], {
          step: moving,
          undone: `${ip} was put back on HostSubnet ${oldHost}`,
        });
      } else {
        const [from, to] = await Promise.all([instanceOf(oldHost), instanceOf(newHost)]);
        await compensated(() => cloud.moveIP(ip, from, to, signal), [{ run: back, leftover: nowhere }], {
          step: `moving the secondary IP ${ip} from instance ${from} to ${to}`,
          undone: `${ip} was put back on HostSubnet ${oldHost}`,
        });
        const onNoHostSubnet = (instance: string, node: string) =>
          `${ip} is a secondary IP of instance ${instance} (node ${node}) and on no HostSubnet: run pulumi up again`;
        await compensated(
          toNew,
          [
            { run: () => cloud.moveIP(ip, to, from), leftover: onNoHostSubnet(to, newHost) },
            { run: back, leftover: onNoHostSubnet(from, oldHost) },
          ],
          {
            step: `putting ${ip} on HostSubnet ${newHost} after moving it to instance ${to}`,
            undone: `${ip} was moved back to instance ${from} and HostSubnet ${oldHost}`,
          },
        );
      }
      planner.record(ip, newHost, name);
    },

    async checkIP(rawIp, host, signal) {
      const ip = canonicalAddress(rawIp);
      const name = ns(`checking ${ip} on node ${host}`);
      const view = await readEgressView(kube);
      const hs = view.hostSubnets.get(host);
      const where = [...view.hostSubnets].filter(([, h]) => h.egressIPs.includes(ip)).map(([n]) => n);
      if (!hs?.egressIPs.includes(ip)) {
        throw new IpamError(
          "DRIFT",
          `egress IP ${ip} is not on HostSubnet ${host}` +
            `${hs ? "" : " (there is no such HostSubnet)"}${where.length ? `; it is on ${where.join(", ")}` : ""}; run pulumi up to put it back`,
        );
      }
      const listed = view.netNamespaces.get(name) ?? [];
      if (!listed.includes(ip)) {
        throw new IpamError(
          "DRIFT",
          `egress IP ${ip} is not on NetNamespace ${name}; run pulumi up to put it back`,
        );
      }
      const record = readOwners(await readObject(kube, netNamespaceRef(name)), listed);
      refuseTakenOver(record, ip, config.owner, `NetNamespace ${name}`);
      if (cloud) await cloud.checkIP(ip, await instanceOf(host), signal);
    },

    async assignCIDR() {},

    async usedAddresses(cidrs, signal) {
      const seen = viewAddresses(await readEgressView(kube));
      const inCloud = cloud?.usedAddresses ? await cloud.usedAddresses(cidrs, signal) : [];
      return addressesWithin([...seen, ...inCloud], cidrs);
    },

    placements: (cidrs) => hostSubnetPlacements(kube, cidrs),
    placementOwners: "named",
    ...(onCloud ? { cloudPlacements: onCloud.placements } : {}),
    namespaceAddresses: (name, signal) => namespaceAddressesOf(planner, name, undefined, signal),
  };
}

function withoutHost(view: EgressView, ...hosts: string[]): EgressView["hostSubnets"] {
  return new Map([...view.hostSubnets].filter(([n]) => !hosts.includes(n)));
}
