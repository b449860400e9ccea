import type { ClusterView } from "../kube/cluster-identity";
import type { PlacementRequest } from "./placement-request";

/** An address a provisioner sees on a host; see {@link EgressIPProvisioner.placements}. */
export interface Placement {
  /** The address, canonical. */
  ip: string;
  /** The host carrying it, as the provisioner names hosts (AWS: the instance ID). */
  host: string;
  /** Other names of the same host (AWS: its private DNS name), so a host named either way in state matches. */
  aliases?: string[];
  /**
   * The platform has the address but has not put it on a host yet (OVN: in `spec.egressIPs`, not
   * yet in `status.items`): it is where state says, whichever host that is.
   */
  awaitingHost?: boolean;
  /**
   * The platform, not this package, chose the host (OVN: ovnkube's `status.items`): on another host
   * than state says, `pulumi refresh` and `pulumi up` record where it is; nothing is taken off the host.
   */
  platformPlaced?: boolean;
  /** A command that takes the address off the host by hand, for a user removing a leaked address. */
  removeCommand?: string;
  /**
   * A command that takes the address off this host only, for a misplaced address whose other
   * entries (OpenShift SDN: its NetNamespace) must stay; default {@link removeCommand}.
   */
  offHostCommand?: string;
  /**
   * On another host than state says, `pulumi refresh` and `pulumi up` re-pin the address where it
   * is listed (cilium: a gateway's nodeSelector in the namespace's policy, which the namespace's
   * other gateways share): nothing is taken off first.
   */
  repinnedInPlace?: boolean;
  /**
   * Who the platform's owner record next to the address names, as the provisioner writes it (see
   * {@link EgressIPProvisioner.placementOwners}); absent when nobody is recorded.
   */
  owners?: string[];
  /** The public address traffic from it leaves from there (aws: the Elastic IP associated with it on that interface), when it has one. */
  publicIp?: string;
  /** What the platform calls that public address (aws: the Elastic IP's allocation ID). */
  publicId?: string;
  /**
   * Why it does not leave from the public address the provisioner's settings give it (aws
   * `elasticIps`: its Elastic IP gone, associated with nothing or elsewhere); absent when it does,
   * or when they give it none.
   */
  publicProblem?: string;
  /**
   * A command to run before `pulumi refresh` and `pulumi up` fix {@link publicProblem}, where they
   * cannot alone (aws: an adopted Elastic IP associated with another address, which `up` never takes
   * from there: disassociated by hand).
   */
  publicFix?: string;
  /**
   * What the platform itself reports about the address (ovn: the EgressIP's `status.items` and
   * ovnkube's Warning events; antrea: the Egress's `status`; ocp-dynamic: the HostSubnet the SDN
   * master put it on), where the kind has such a report; absent for a kind whose objects are all
   * this package's writing (ocp-static, cilium, aws).
   */
  platform?: PlatformStatus;
}

/**
 * What a platform reports about one address: `placed` on `node`; `unplaced`: it reported, and not
 * this address on a node (`why`: its own words, and what to check); `unreported`: it wrote nothing
 * about it (its controller has not acted on it yet, or is not running): not drift, only not
 * confirmed.
 */
export interface PlatformStatus {
  state: "placed" | "unplaced" | "unreported";
  /** The node the platform put it on (`placed`). */
  node?: string;
  /** Why it is not placed, or why nothing is known (`unplaced`, `unreported`). */
  why?: string;
}

/** An address a cluster already gives a namespace; see {@link EgressIPProvisioner.namespaceAddresses}. */
export interface NamespaceAddress {
  /** The address, canonical. */
  ip: string;
  /** Where it was seen, for messages: `NetNamespace team-a`, `EgressIP team-a-egress`, an annotation. */
  source: string;
  /** The host carrying it, as the provisioner names hosts, when the cluster shows one. */
  host?: string;
  /** The Node carrying it (the same as `host` except for ocp-dynamic, whose host is the SDN master's choice). */
  node?: string;
  /** The failure domain of that Node (its zone label), when it has one and matches the node selector. */
  failureDomain?: string;
}

/**
 * The low-level manager of egress IPs on hosts, after the seed `EgressIPProvisioner` interface.
 * Every method is async and takes an optional AbortSignal; IPs are canonical strings without
 * prefix length; hosts are the provisioner's own names (EC2 instance IDs or node names, or opaque
 * labels for `none`).
 */
export interface EgressIPProvisioner {
  /**
   * Picks a host in the failure domain to put a new IP on: the least loaded eligible one.
   * @throws IpamError (HOST_UNAVAILABLE) naming the failure domain when it has no eligible host.
   */
  findHostForNewIP(failureDomain: string, signal?: AbortSignal): Promise<string>;
  /**
   * Optional: {@link findHostForNewIP} for an address already known (planned by the pool), so the
   * host can be one whose network carries it (Kubernetes: the Node's egress subnet) and the
   * provisioner can remember which address it planned where. Preferred over `findHostForNewIP`.
   * @throws IpamError (HOST_UNAVAILABLE) naming the failure domain, and why each of its hosts cannot take the address.
   */
  findHostForIP?(ip: string, failureDomain: string, signal?: AbortSignal): Promise<string>;
  /** Puts a given IP on the host. @throws IpamError (ADDRESS_IN_USE, HOST_UNAVAILABLE, PROVISIONER_FAILED, …) when the IP cannot be used there. */
  addSpecifiedIP(ip: string, host: string, signal?: AbortSignal): Promise<void>;
  /** Lets the platform pick an IP for the host and returns it. */
  addRandomIP(host: string, signal?: AbortSignal): Promise<string>;
  /** Takes the IP off the host; an IP or host that is already gone is not an error. */
  removeIP(ip: string, host: string, signal?: AbortSignal): Promise<void>;
  /** Moves the IP from one host to another, leaving it on exactly one. */
  moveIP(ip: string, oldHost: string, newHost: string, signal?: AbortSignal): Promise<void>;
  /** Resolves when the IP is on the host. @throws IpamError (DRIFT, TAKEN_OVER, PROVISIONER_FAILED) naming the IP and host when it is not. */
  checkIP(ip: string, host: string, signal?: AbortSignal): Promise<void>;
  /** Makes the host able to carry the pool's IPs (ocp-dynamic egressCIDRs); a no-op elsewhere. */
  assignCIDR(host: string, signal?: AbortSignal): Promise<void>;
  /** Optional: undoes {@link assignCIDR} (ocp-dynamic: egressCIDRs off the HostSubnet; ovn: the label off the Node). */
  unassignCIDR?(host: string, signal?: AbortSignal): Promise<void>;
  /**
   * Optional, read only: the public address traffic from the egress IP `ip` leaves from, where the
   * provisioner gives it one (aws with `elasticIps`: the Elastic IP associated with it now), or
   * undefined (none is associated, or the provisioner gives it none). A resource can expose it as an
   * output after create, update and refresh; a missing or wrong association is what `checkIP`
   * reports as DRIFT.
   */
  publicAddress?(ip: string, signal?: AbortSignal): Promise<string | undefined>;
  /**
   * Optional, read only, asked at `check` so that preview shows it: the public address `ip` will
   * leave from once placed, where it is known before (aws: an adopted Elastic IP, or the one this
   * package allocated for it earlier), else undefined. Unlike {@link publicAddress}, what the
   * settings give, not what is associated now.
   * @throws IpamError NOT_FOUND naming an adopted allocation that does not exist; ADDRESS_IN_USE naming one associated with another address.
   */
  plannedPublicAddress?(ip: string, signal?: AbortSignal): Promise<string | undefined>;
  /**
   * Optional: gives `ip`, already on `host`, the public address these settings give it (aws:
   * associates its Elastic IP there, allocating one with `elasticIps: "allocate"`), leaving the
   * address itself where it is; a no-op where they give none. For a change of those settings alone.
   * @throws IpamError DRIFT when `ip` is not on `host`; TAKEN_OVER when another owner's record names it there; NOT_FOUND, ADDRESS_IN_USE for an adopted allocation that cannot be had.
   */
  attachPublicAddress?(ip: string, host: string, signal?: AbortSignal): Promise<void>;
  /**
   * Optional: takes off `ip` the public address these settings give it (aws: disassociates its
   * Elastic IP, releasing it only if this package allocated it), leaving the address itself where
   * it is; a no-op where they give none, and for one gone already. The counterpart of
   * {@link attachPublicAddress}, called on the provisioner of the settings before the change.
   * `keep` is what the settings after the change give the address (aws: an allocation ID, or
   * `"allocate"`): a public address they would use again stays where it is (switching from
   * `"allocate"` to adopting the same allocation neither releases nor moves it).
   */
  detachPublicAddress?(ip: string, signal?: AbortSignal, keep?: string): Promise<void>;
  /**
   * Optional: addresses inside `cidrs` that are in use outside Pulumi state (AWS: every private IP
   * and IPv6 address of every network interface in those subnets), so the pool never plans them.
   * Canonical strings: addresses, or a CIDR block wholly in use where its addresses are too many to
   * list (AWS: a delegated IPv6 /80 prefix); pools take both as exclusions.
   */
  usedAddresses?(cidrs: string[], signal?: AbortSignal): Promise<string[]>;
  /**
   * Optional: whether `host` is still an eligible host of the failure domain (running, tagged).
   * Asked at every `check` for a placed address, so it must be cheap (a cached inventory); when it
   * says no, the address is planned onto another host and the next `up` moves it there.
   */
  hostServes?(host: string, failureDomain: string, signal?: AbortSignal): Promise<boolean>;
  /**
   * Optional, read only: every egress-capable address inside `cidrs` that the provisioner sees on a
   * host (AWS: the secondary private IPs of instances' interfaces; a primary IP is the host's own;
   * Kubernetes: HostSubnet, NetNamespace or EgressIP entries, as the kind writes them).
   * `pulumi-egress-ipam check` compares it with state to find leaked, missing and misplaced addresses.
   */
  placements?(cidrs: string[], signal?: AbortSignal): Promise<Placement[]>;
  /**
   * How {@link Placement.owners} names owners: `named` (Kubernetes kinds: `<stack identity> <URN>`,
   * the `egress-ipam/owners` record of the object the kind writes), `hashed` (aws: the value of
   * the interface's `egress-ipam/<ip>` tag, a hash of that text). `check` asks only a kind that has
   * both this and {@link placements}: only an address whose record names the stack is ever its to
   * remove.
   */
  readonly placementOwners?: "named" | "hashed";
  /**
   * Optional, read only: where a kind whose hosts also carry each address on their cloud instance
   * (`cloud: { kind: "aws" }` of ocp-static and cilium: a secondary private IP of the Node's EC2
   * instance) sees its addresses there, hosts named as the kind names them (the Node whose
   * providerID is the instance; the instance ID when no Node is), owners as the aws kind records
   * them (`hashed`). `check` compares it with state as it compares {@link placements}.
   */
  cloudPlacements?(cidrs: string[], signal?: AbortSignal): Promise<Placement[]>;
  /**
   * Optional, read only: the egress addresses the cluster gives `namespace` now, whoever wrote them
   * (Kubernetes kinds: its NetNamespace's egressIPs, EgressIP objects selecting it, the
   * egressip-ipam-operator's annotation), with the host carrying each where the cluster shows one.
   * `adopt: true` on an EgressIp plans exactly these.
   */
  namespaceAddresses?(namespace: string, signal?: AbortSignal): Promise<NamespaceAddress[]>;
  /**
   * Optional, read only, asked at every `check` before a host is chosen, first of the three
   * refusals (then {@link adoptable}, then {@link conflicts}): refuses what the platform cannot
   * give the request whatever else is there (cilium: an address of a family its destinations hold
   * no CIDR of, which its policy would send nothing through).
   * @throws IpamError INVALID_INPUT naming the address and what to change.
   */
  validate?(request: PlacementRequest, signal?: AbortSignal): Promise<void>;
  /**
   * Optional, read only, asked at every `check` after {@link validate}: refuses an object made by
   * hand (not by this package) that already serves the request's pods (ovn, cilium, antrea: an
   * EgressIP, policy or Egress serving every pod of the namespace) unless the assignment's
   * `adopt: true` takes it over, and with `adopt: true` one that cannot be taken over as it is.
   * @throws IpamError SCOPE_CONFLICT (INVALID_INPUT, ADDRESS_IN_USE for one that cannot be taken over) naming the object and what to do.
   */
  adoptable?(request: PlacementRequest, signal?: AbortSignal): Promise<void>;
  /**
   * Optional, read only, asked at every `check` after {@link adoptable}: refuses what the request
   * cannot share with the others writing the same objects or serving the same pods (cilium: a
   * selection's policy has one set of destinations, so two EgressIps asking it for different ones
   * would rewrite each other's at every up; ovn, cilium, antrea: pod selections of one namespace
   * that can take the same pod, in the cluster or asked by another EgressIp of the deployment;
   * antrea: an IPv4 and an IPv6 Egress for the same pods).
   * @throws IpamError SCOPE_CONFLICT naming both sides and what to do.
   */
  conflicts?(request: PlacementRequest, signal?: AbortSignal): Promise<void>;
  /**
   * Optional, no call made: which cluster the provisioner's objects are on (Kubernetes kinds: the
   * cluster its kubeconfig context points at). Resources record it at their first `check` and
   * refuse every later operation whose context points at another cluster.
   * @throws IpamError INVALID_CONFIG when the kubeconfig or its context cannot be loaded.
   */
  cluster?(): ClusterView;
}

/**
 * What a resource adds to the user's provisioner settings when it builds the provisioner that
 * serves it (see `withInstanceSettings`, config/provisioner-config.ts); never part of the `provisioner` input itself.
 */
export interface InstanceSettings {
  /** The namespace an EgressIp serves (ocp-static, ocp-dynamic: its NetNamespace; ovn: its EgressIP object; antrea: its Egress objects). */
  namespace?: string;
  /** The pool's CIDRs a CidrAssignment assigns (ocp-dynamic: HostSubnet.egressCIDRs). */
  cidrs?: string[];
  /**
   * Who the resource is in the owner records on the objects it changes (`<stack identity> <URN>`;
   * see `ownersAnnotation`). A CidrAssignment's CIDRs and labels are taken off only when no other
   * owner is left; an EgressIpAssignment refuses an address its namespace already has from another.
   */
  owner?: string;
  /**
   * Which items already on an object count as this owner's (see {@link AdoptPresent}): `true` for a
   * CidrAssignment written by an earlier version (which recorded nobody) and for the create of an
   * EgressIpAssignment with `adopt: true`; `"unrecorded"` for an EgressIpAssignment's update.
   */
  adoptPresent?: AdoptPresent;
  /**
   * The pods an EgressIp serves within its namespace, by label (ovn: its own EgressIP object's
   * `podSelector`; cilium: its own policies' `selectors`; antrea: its Egresses' `appliedTo.podSelector`).
   */
  podSelector?: Record<string, string>;
}

/**
 * Which addresses already listed where an owner puts one count as its own. `true` (create with
 * `adopt: true`): whatever is there, taken over. `false` or absent (create): only what is recorded
 * for this owner (the retry of an interrupted create). `"unrecorded"` (update: put back after
 * drift, move): what is recorded for this owner or for nobody (an earlier version recorded
 * nobody), never what another owner's record names (an adopter's). A platform whose unrecorded
 * addresses prove nothing (aws: an untagged EC2 address) treats `"unrecorded"` as `false`.
 */
export type AdoptPresent = boolean | "unrecorded";
