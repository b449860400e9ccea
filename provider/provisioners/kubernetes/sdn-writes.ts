import { IpamError } from "../../core/ipam-error";
import type { KubeClients } from "../../kube/kube-config";
import { editObject, readObject } from "../../kube/object-edit";
import { sleep } from "../../core/retry";
import { adding, editAddressList, removing } from "./address-lists";
import { addressList, hostSubnetRef, netNamespaceRef, type EgressView } from "./egress-view";
import type { AdoptPresent } from "../egress-ip-provisioner";
import { ownersValue, readOwners, refuseUnowned, withOwners, withoutAddressOwner } from "./owners";
import { takenAddress } from "../taken-address";

/** The OpenShift SDN writes of the ocp-static and ocp-dynamic provisioners, for one cluster. */
export interface SdnWrites {
  /**
   * Puts `ip` on the node's HostSubnet.egressIPs, refusing a HostSubnet in automatic mode
   * (egressCIDRs) and a second address of `namespace` (whose addresses are `namespaceIps`).
   */
  onHostSubnet(
    ip: string,
    host: string,
    namespace: string,
    namespaceIps: string[],
    signal?: AbortSignal,
  ): Promise<void>;
  /** Takes `ip` off the node's HostSubnet; an absent HostSubnet or address is fine. */
  offHostSubnet(ip: string, host: string, signal?: AbortSignal): Promise<void>;
  /**
   * Puts `ip` on the namespace's NetNamespace.egressIPs, waiting for it as {@link waitForNetNamespace}.
   * With `claim`, records its owner there (`egress-ipam/owners`) and refuses an address the
   * NetNamespace lists already that does not count as that owner's under `claim.adopt` (see refuseUnowned).
   */
  onNetNamespace(
    ip: string,
    namespace: string,
    signal?: AbortSignal,
    claim?: NetNamespaceClaim,
  ): Promise<void>;
  /**
   * Takes `ip` (and its owner record) off the namespace's NetNamespace, when it is still `owner`'s
   * there (see {@link withoutAddressOwner}); an absent NetNamespace or address is fine. Resolves
   * false when the record names another owner (an adopter): nothing was changed.
   */
  offNetNamespace(
    ip: string,
    namespace: string,
    owner: string | undefined,
    signal?: AbortSignal,
  ): Promise<boolean>;
}

/**
 * Waits until the namespace's NetNamespace exists: the SDN master makes one for every new
 * namespace a moment after it appears (e.g. a Namespace created in the same deployment).
 * @throws IpamError NOT_FOUND naming the namespace and the server when none came within `waitMs` (default 60 s).
 */
export async function waitForNetNamespace(
  kube: KubeClients,
  namespace: string,
  signal?: AbortSignal,
  waitMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  while (!(await readObject(kube, netNamespaceRef(namespace)))) {
    if (Date.now() >= deadline) {
      throw new IpamError(
        "NOT_FOUND",
        `NetNamespace ${namespace} does not exist on ${kube.server} (context "${kube.context}") after ${waitMs / 1000} s: ` +
          `OpenShift SDN makes one for every namespace; create namespace ${namespace} first, or use the ovn ` +
          `provisioner if the cluster runs OVN-Kubernetes`,
      );
    }
    await sleep(500, signal);
  }
}

/** Who puts an address on a NetNamespace: see {@link SdnWrites.onNetNamespace}. */
export interface NetNamespaceClaim {
  owner: string;
  /** Which addresses listed already count as this owner's (see `AdoptPresent`). */
  adopt: AdoptPresent | undefined;
}

/** {@link SdnWrites} through the cluster's clients. */
export function sdnWrites(kube: KubeClients): SdnWrites {
  return {
    onHostSubnet: (ip, host, namespace, namespaceIps, signal) =>
      editAddressList(
        kube,
        hostSubnetRef(host),
        "egressIPs",
        `adding ${ip} to HostSubnet ${host}`,
        adding(ip, (list, object) => {
          if (Array.isArray(object.egressCIDRs) && object.egressCIDRs.length > 0) {
            throw new IpamError(
              "HOST_UNAVAILABLE",
              `HostSubnet ${host} has egressCIDRs (automatic mode); manual egress IPs must not be mixed with them: ` +
                `choose another node, or use the ocp-dynamic provisioner`,
            );
          }
          const twin = list.find((x) => x !== ip && namespaceIps.includes(x));
          if (twin) {
            throw new IpamError(
              "HOST_UNAVAILABLE",
              `node ${host} already carries ${twin} of namespace ${namespace}; OpenShift SDN needs each egress IP of a ` +
                `namespace on a different node: choose another node`,
            );
          }
        }),
        "OpenShift SDN makes one per node: is the node part of the SDN?",
        undefined,
        signal,
      ),
    offHostSubnet: (ip, host, signal) =>
      editAddressList(
        kube,
        hostSubnetRef(host),
        "egressIPs",
        `removing ${ip} from HostSubnet ${host}`,
        removing(ip),
        undefined,
        undefined,
        signal,
      ),
    onNetNamespace: async (ip, namespace, signal, claim) => {
      await waitForNetNamespace(kube, namespace, signal);
      const doing = `adding ${ip} to NetNamespace ${namespace}`;
      await editObject(
        kube,
        netNamespaceRef(namespace),
        doing,
        (current) => {
          if (!current) {
            throw new IpamError(
              "NOT_FOUND",
              `${doing}: NetNamespace ${namespace} does not exist on ${kube.server} (context "${kube.context}"); ` +
                `OpenShift SDN makes one for every namespace: create namespace ${namespace} first`,
            );
          }
          const list = addressList(current, "egressIPs");
          const owners = readOwners(current, list);
          if (!claim)
            return withOwners(current, owners, { egressIPs: list.includes(ip) ? list : [...list, ip] });
          if (list.includes(ip)) {
            refuseUnowned(owners, ip, claim.owner, claim.adopt, `NetNamespace ${namespace}`);
          }
          return withOwners(
            current,
            { ...owners, [ip]: [claim.owner] },
            {
              egressIPs: list.includes(ip) ? list : [...list, ip],
            },
          );
        },
        undefined,
        signal,
      );
    },
    offNetNamespace: async (ip, namespace, owner, signal) => {
      let tookOff = true;
      await editObject(
        kube,
        netNamespaceRef(namespace),
        `removing ${ip} from NetNamespace ${namespace}`,
        (current) => {
          tookOff = true;
          if (!current) return undefined;
          const list = addressList(current, "egressIPs");
          const owners = readOwners(current, list);
          const next = withoutAddressOwner(owners, ip, owner);
          tookOff = next.takeOff;
          if (!next.takeOff) {
            return ownersValue(next.owners) === ownersValue(owners)
              ? undefined
              : withOwners(current, next.owners, {});
          }
          const left = list.filter((x) => x !== ip);
          return withOwners(current, next.owners, { egressIPs: left.length > 0 ? left : undefined });
        },
        undefined,
        signal,
      );
      return tookOff;
    },
  };
}

/**
 * Refuses an address another node's HostSubnet (other than `host`) or another namespace's
 * NetNamespace already has: an egress IP is on exactly one of each.
 */
export function refuseForeignSdn(
  ip: string,
  host: string | undefined,
  namespace: string,
  view: EgressView,
): void {
  for (const [node, h] of view.hostSubnets) {
    if (host !== undefined && node !== host && h.egressIPs.includes(ip)) {
      throw takenAddress(
        ip,
        `cannot put ${ip} on node ${host}: HostSubnet ${node} already has it; an egress IP must be on exactly one ` +
          `HostSubnet`,
      );
    }
  }
  for (const [other, ips] of view.netNamespaces) {
    if (other !== namespace && ips.includes(ip)) {
      throw takenAddress(
        ip,
        `cannot give ${ip} to namespace ${namespace}: NetNamespace ${other} already has it`,
      );
    }
  }
}
