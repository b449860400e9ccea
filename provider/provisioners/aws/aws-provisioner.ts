import { IpamError } from "../../core/ipam-error";
import { errorMessage } from "../../core/failure";
import { warnOnce } from "../../core/warnings";
import { shellCommand } from "../../core/text";
import { addressFamily, canonicalAddress, type AddressFamily } from "../../allocator";
import { familyName } from "../../allocator/address";
import { parseAddressBlock, type AddressBlock } from "../../allocator/exclusions";
import { parsePrefix, prefixContains } from "../../allocator/prefix";
import { Ec2, subnetBlockOf, type Ec2Instance, type Eni, type Subnet } from "./ec2";
import { hostLabel, HostInventory, primaryInterface } from "./hosts";
import { HostPlan } from "./host-plan";
import { prefixHolding, prefixUseWithin } from "./prefixes";
import { takenAddress } from "../taken-address";
import { defaultRetryPolicy, ec2ErrorCode, type RetryPolicy } from "./ec2-retry";
import { ec2Failure } from "./ec2-failure";
import type { AdoptPresent, EgressIPProvisioner } from "../egress-ip-provisioner";
import {
  elasticIpFor,
  elasticIpsProblems,
  type AwsProvisionerConfig,
} from "../config/aws-provisioner-config";
import { elasticIpPlacement, publicAddresses } from "./elastic-ips";
import { ownerTagKey, ownerTagValue } from "./owner-tag";

/** Tuning of the `aws` provisioner that does not belong in state (tests shorten the waits). */
export interface AwsProvisionerOptions {
  /** Retry and backoff; see {@link RetryPolicy}. */
  retry?: Partial<RetryPolicy>;
  /** How long a zone's list of eligible hosts is reused when choosing hosts (default 15 s). */
  inventoryTtlMs?: number;
}

function overlaps(a: string, b: string): boolean {
  const x = parsePrefix(a);
  const y = parsePrefix(b);
  return x.family === y.family && x.network <= y.last && y.network <= x.last;
}

const holds = (eni: Eni, ip: string) => eni.addresses.some((a) => a.ip === ip);

/** What an egress address is on an interface, for messages: `a secondary IP`, `an IPv6 address`. */
const asAddress = (ip: string) => (addressFamily(ip) === 6 ? "an IPv6 address" : "a secondary IP");

export { ownerTagKey, ownerTagValue };

/** The methods that read or write the owner record (see {@link AwsProvisioner.forOwner}). */
type OwnedMethods =
  | "addSpecifiedIP"
  | "removeIP"
  | "moveIP"
  | "checkIP"
  | "publicAddress"
  | "plannedPublicAddress"
  | "attachPublicAddress"
  | "detachPublicAddress";

/** The `aws` provisioner, and views of it that record and check an owner (see {@link AwsProvisioner.forOwner}). */
export interface AwsProvisioner extends EgressIPProvisioner {
  /**
   * The same provisioner (one inventory, one load count) acting for one assignment: the interface
   * it puts an address on is tagged {@link ownerTagKey} = {@link ownerTagValue}; an address already
   * on the target without this owner's tag is refused (somebody else's: a VPC CNI warm IP, another
   * tool, another stack), unless `adopt`, which moves the record to this owner. Whatever `adopt`
   * says, a move never reassigns an address another owner's tag claims, nor one found on the target
   * without this owner's tag; a removal takes the address off only where the record, read
   * immediately before, names no other owner; `checkIP` fails for an address another owner's tag
   * claims. An untagged address on the host (placed by an earlier version) is this owner's for a
   * move, a removal and `checkIP`, but not for putting it back: an untagged EC2 address proves no
   * ownership (a VPC CNI warm IP), so `adopt: "unrecorded"` (an update) takes over nothing, as
   * `false`. The provisioner itself (no owner) writes and checks no tags.
   */
  forOwner(owner: string, adopt?: AdoptPresent): EgressIPProvisioner;
}

/**
 * The `aws` provisioner: egress IPs are secondary private IPv4 addresses, or IPv6 addresses, of the
 * primary network interface of EC2 instances (hosts: instance IDs or private DNS names; failure
 * domains: availability zones). Uses the AWS SDK v3 with the default credential chain; every call is
 * retried on throttling and, where a resource must exist, on eventual consistency.
 */
export function awsProvisioner(
  config: AwsProvisionerConfig & { owner?: string; adoptPresent?: AdoptPresent },
  options: AwsProvisionerOptions = {},
): AwsProvisioner {
  const region = config.region;
  const problems = elasticIpsProblems(config.elasticIps);
  if (problems.length > 0) {
    throw new IpamError(
      "INVALID_CONFIG",
      `invalid aws provisioner config: ${problems.map((p) => `${p.property}: ${p.reason}`).join("; ")}`,
    );
  }
  const ec2 = new Ec2({
    region,
    endpoint: config.endpoint,
    retry: { ...defaultRetryPolicy, ...options.retry },
  });
  const hosts = new HostInventory(ec2, {
    region,
    hostTags: config.hostTags ?? {},
    ttlMs: options.inventoryTtlMs ?? 15_000,
  });
  const subnets = new Map<string, Promise<Subnet>>();

  const subnetOf = (id: string, signal?: AbortSignal): Promise<Subnet> => {
    let subnet = subnets.get(id);
    if (!subnet) {
      subnet = ec2.subnets([id], signal).then(([s]) => {
        if (!s) throw new IpamError("NOT_FOUND", `subnet ${id} was not found in ${region}`);
        return s;
      });
      subnet.catch(() => subnets.delete(id));
      subnets.set(id, subnet);
    }
    return subnet;
  };
  const plan = new HostPlan({
    eligible: (zone, signal) => hosts.eligible(zone, signal),
    subnetCidr: async (id, signal) => (await subnetOf(id, signal)).cidrs,
    ipsPerInterface: (type, signal, family = 4) => ec2.addressesPerInterface(type, family, signal),
    interfaceTags: (ids, signal) => ec2.interfaceTags(ids, signal),
    tagText: hosts.tagText,
    region,
  });

  const mustFind = async (host: string, signal?: AbortSignal): Promise<Ec2Instance> => {
    const instance = await hosts.find(host, signal);
    if (!instance) {
      throw new IpamError(
        "NOT_FOUND",
        `no EC2 instance "${host}" in ${region} (looked up by ${hosts.describeLookup(host)}); ` +
          `give the instance ID or private DNS name of a running instance`,
      );
    }
    return instance;
  };

  /** A running host, its primary interface and that interface's subnet: where a new address goes. */
  const target = async (host: string, signal?: AbortSignal) => {
    const instance = await mustFind(host, signal);
    if (instance.state !== "running" && instance.state !== "pending") {
      throw new IpamError(
        "HOST_UNAVAILABLE",
        `host ${hostLabel(instance)} is ${instance.state}: egress IPs go on running instances; ` +
          `start it, or let the provisioner choose another host in ${instance.availabilityZone}`,
      );
    }
    const eni = primaryInterface(instance);
    if (!eni)
      throw new IpamError(
        "HOST_UNAVAILABLE",
        `host ${hostLabel(instance)} has no network interface to put an egress IP on`,
      );
    return { instance, eni, subnet: await subnetOf(eni.subnetId, signal) };
  };

  /** The block of the subnet that contains `ip`. @throws IpamError HOST_UNAVAILABLE naming both when none does. */
  const blockFor = (ip: string, instance: Ec2Instance, eni: Eni, subnet: Subnet): string => {
    const block = subnetBlockOf(subnet, ip);
    if (block) return block;
    const family = addressFamily(ip);
    const ofFamily = subnet.cidrs.filter((c) => parsePrefix(c).family === family);
    const where = `its interface ${eni.id} is in subnet ${subnet.id} (${subnet.cidrs.join(", ")}, ${subnet.availabilityZone})`;
    const associate =
      family === 6
        ? "associate an IPv6 block with the subnet (aws ec2 associate-subnet-cidr-block) and plan the address from a pool of it, or "
        : "";
    throw new IpamError(
      "HOST_UNAVAILABLE",
      ofFamily.length === 0
        ? `cannot put ${ip} on host ${hostLabel(instance)}: ${where}, which has no ${familyName(family)} CIDR ` +
            `block; ${associate}place it on a host in a subnet that has one`
        : `cannot put ${ip} on host ${hostLabel(instance)}: ${where}, which does not contain ${ip}; plan the ` +
            `address from a pool whose range lies in ${ofFamily.join(" or ")}, or place it on a host in the ` +
            `subnet that contains it`,
    );
  };

  /** An assignment failure, with what to do where EC2 says why (a full interface, an address in use). */
  const assignFailure = async (
    doing: string,
    err: unknown,
    instance: Ec2Instance,
    eni: Eni,
    ip?: string,
    family: AddressFamily = ip ? addressFamily(ip) : 4,
  ) => {
    const code = ec2ErrorCode(err);
    if (code === "PrivateIpAddressLimitExceeded" || code === "InvalidInterface.IpAddressLimitExceeded") {
      const limit = await ec2.addressesPerInterface(instance.instanceType, family).catch(() => undefined);
      const takes =
        limit === undefined
          ? ""
          : family === 4
            ? ` (a ${instance.instanceType} interface takes ${limit} IPv4 addresses, the primary included)`
            : ` (a ${instance.instanceType} interface takes ${limit} IPv6 addresses)`;
      return ec2Failure(
        doing,
        err,
        `host ${hostLabel(instance)} has no room for another address on ${eni.id}${takes}: ` +
          `remove unused addresses there, or choose another host`,
        "HOST_UNAVAILABLE",
      );
    }
    if (ip && /in use|InUse/.test(`${code} ${String(err)}`)) {
      const { message } = ec2Failure(doing, err, `${ip} was taken in ${eni.subnetId} meanwhile`);
      return takenAddress(ip, message, false, { cause: err });
    }
    return ec2Failure(doing, err);
  };

  /** Every interface in a subnet that overlaps one of the CIDRs. */
  const interfacesWithin = async (cidrs: string[], signal?: AbortSignal): Promise<Eni[]> => {
    for (const cidr of cidrs) parsePrefix(cidr);
    // By subnet, then client-side: the `addresses.private-ip-address` filter is not reliable for
    // secondary addresses everywhere (moto matches primaries only).
    const all = await ec2.subnets(undefined, signal);
    const overlapping = all
      .filter((s) => cidrs.some((c) => s.cidrs.some((block) => overlaps(c, block))))
      .map((s) => s.id);
    return overlapping.length === 0 ? [] : ec2.interfacesInSubnets(overlapping, signal);
  };

  /** Puts one given address on an interface: a secondary private IPv4 address, or an IPv6 address. */
  const assignOne = (eniId: string, ip: string, allowReassignment: boolean, signal?: AbortSignal) =>
    addressFamily(ip) === 6
      ? ec2.assignIpv6(eniId, [ip], signal)
      : ec2.assign(eniId, { ips: [ip], allowReassignment }, signal).then(() => undefined);
  const unassignOne = (eniId: string, ip: string, signal?: AbortSignal) =>
    addressFamily(ip) === 6 ? ec2.unassignIpv6(eniId, [ip], signal) : ec2.unassign(eniId, [ip], signal);

  /**
   * The methods that put addresses on and take them off, acting for `owner` (see
   * {@link AwsProvisioner.forOwner}); without one, no tag is written or checked.
   */
  const owned = (owner: string | undefined, adoptPresent?: AdoptPresent) => {
    const adopt = adoptPresent === true;
    const tagged = owner === undefined ? undefined : ownerTagValue(owner);
    // The Elastic IPs this package allocates are tagged with their owner; without one, the owner "".
    const publicIps = publicAddresses(ec2, config.elasticIps, tagged ?? ownerTagValue(""), region);
    const recordOf = (eni: Eni, ip: string) => eni.tags?.[ownerTagKey(ip)];
    /** Why `eni`'s tag says the address is not this owner's ("" when it is, or nobody's tag is there). */
    const claimedByOther = (eni: Eni, ip: string) => {
      const value = recordOf(eni, ip);
      return tagged !== undefined && value !== undefined && value !== tagged ? value : "";
    };
    /** Whose `ip` on `eni` is, as its record says, for messages about an address that is not ours. */
    const whose = (eni: Eni, ip: string) => {
      const value = recordOf(eni, ip);
      return value
        ? `recorded for another assignment (tag ${ownerTagKey(ip)}=${value})`
        : `not put there by this package (no ${ownerTagKey(ip)} tag)`;
    };
    /**
     * Whether `holder`, an interface of another host than the one state names, has `ip` with this
     * owner's own record: an interrupted move of its own (the record goes first, then EC2
     * reassigns the address) left it there, before state learnt the host. It is this owner's to take.
     */
    const leftByOwnMove = (holder: Eni, ip: string) =>
      tagged !== undefined && recordOf(holder, ip) === tagged;
    /** The host's interfaces as they are now: with their tags when there is an owner to read. */
    const interfacesNow = (instance: Ec2Instance, signal?: AbortSignal) =>
      tagged === undefined ? Promise.resolve(instance.interfaces) : ec2.interfacesOf(instance.id, signal);

    /**
     * Takes `ip` off the interface; an interface or address already gone is fine. Returns whether
     * it was taken off now.
     */
    const unassignFrom = async (eni: Eni, ip: string, signal?: AbortSignal): Promise<boolean> => {
      try {
        await unassignOne(eni.id, ip, signal);
      } catch (err) {
        const code = ec2ErrorCode(err);
        // Gone already: the interface was deleted, or the address left it in the meantime.
        if (code === "InvalidNetworkInterfaceID.NotFound") return false;
        if (code === "InvalidParameterValue" && /not assigned|does not have/i.test(String(err))) return false;
        const on = eni.instanceId ? ` of host ${eni.instanceId}` : "";
        throw ec2Failure(`removing ${ip} from ${eni.id}${on}`, err);
      }
      if (eni.instanceId) hosts.removed(eni.instanceId);
      return true;
    };
    /**
     * Takes `ip` off every interface of the host except `keep`, but only where it is this owner's
     * now: the record, read immediately before, names nobody else (an untagged address was placed
     * by an earlier version). An address another owner took over (adopt: true, another stack or a
     * renamed resource) stays, with its record. A missing host or address is fine. Returns the
     * interfaces whose record is this owner's (the records to remove), and whether an interface
     * keeps the address for another owner.
     */
    const removeFrom = async (ip: string, host: string, keep: string | undefined, signal?: AbortSignal) => {
      const instance = await hosts.find(host, signal);
      const out = { records: [] as string[], keptForOther: false };
      if (!instance) return out;
      for (const eni of await interfacesNow(instance, signal)) {
        if (eni.id === keep) continue;
        if (claimedByOther(eni, ip)) {
          out.keptForOther ||= holds(eni, ip);
          continue;
        }
        const ours = tagged !== undefined && recordOf(eni, ip) === tagged;
        if (ours) out.records.push(eni.id);
        if (!eni.addresses.some((a) => a.ip === ip && !a.primary)) continue;
        // This package places addresses on the primary interface only: on another one (a pod's
        // address the VPC CNI put on eth1), an address without this owner's record is somebody else's.
        if (!ours && (eni.deviceIndex ?? 0) !== 0) continue;
        await unassignFrom(eni, ip, signal);
      }
      return out;
    };
    const tag = (eniId: string, ip: string, signal?: AbortSignal) =>
      tagged === undefined
        ? Promise.resolve()
        : ec2.tag(eniId, { [ownerTagKey(ip)]: tagged }, signal).catch((err) => {
            throw ec2Failure(
              `tagging ${eniId} with ${ownerTagKey(ip)} (the record that this assignment put ${ip} there)`,
              err,
              `the credentials need ec2:CreateTags on network interfaces; an interface takes at most 50 tags`,
            );
          });
    // A record left behind is harmless (a later placement there overwrites it; an address found
    // with it is still refused to others), so failing to remove one warns rather than fails.
    const untag = async (eniIds: string[], ip: string) => {
      if (tagged === undefined) return;
      for (const id of eniIds) {
        await ec2.untag(id, [ownerTagKey(ip)]).catch((err) => {
          if (ec2ErrorCode(err) === "InvalidNetworkInterfaceID.NotFound") return;
          warnOnce(
            `could not remove the tag ${ownerTagKey(ip)} from ${id}: ${errorMessage(err)}; ` +
              `the credentials need ec2:DeleteTags on network interfaces (the tag can also be removed by hand)`,
          );
        });
      }
    };

    const methods: Pick<EgressIPProvisioner, OwnedMethods> = {
      async addSpecifiedIP(rawIp, host, signal) {
        const ip = canonicalAddress(rawIp);
        const { instance, eni, subnet } = await target(host, signal);
        blockFor(ip, instance, eni, subnet);
        // Read now, not from the inventory: whoever has the address has it at this moment.
        const inSubnet = await ec2.interfacesInSubnets([subnet.id], signal);
        const delegated = inSubnet.find((n) => prefixHolding(n, ip));
        if (delegated) {
          throw takenAddress(
            ip,
            `cannot put ${ip} on host ${hostLabel(instance)}: ${ip} is inside the prefix ${prefixHolding(delegated, ip)} ` +
              `delegated to ${delegated.id}${delegated.instanceId ? ` (instance ${delegated.instanceId})` : ""}: its ` +
              `addresses are pods' (VPC CNI prefix delegation)`,
          );
        }
        const holder = inSubnet.find((n) => holds(n, ip));
        if (holder?.instanceId && holder.id !== eni.id && leftByOwnMove(holder, ip)) {
          // Moved back from where the interrupted move left it (its record and all).
          return methods.moveIP(ip, holder.instanceId, host, signal);
        }
        if (holder && holder.id !== eni.id) {
          throw takenAddress(
            ip,
            `cannot put ${ip} on host ${hostLabel(instance)}: ${ip} is already used by ${holder.id}` +
              `${holder.instanceId ? ` (instance ${holder.instanceId})` : ""}${holder.description ? ` "${holder.description}"` : ""} ` +
              `in subnet ${subnet.id}`,
          );
        }
        if (holder) {
          // On the target already: this assignment's own (the retry of an interrupted create) only
          // when its tag says so; anybody else's, unless adopted.
          if (tagged !== undefined && recordOf(holder, ip) !== tagged) {
            if (!adopt) {
              // Adopting is the way out of a create only: putting an address back never takes it over.
              throw takenAddress(
                ip,
                `cannot put ${ip} on host ${hostLabel(instance)}: ${ip} is already ${asAddress(ip)} of its interface ` +
                  `${eni.id}, ${whose(holder, ip)}: the address is somebody else's (a VPC CNI warm IP, another ` +
                  `tool, another stack)`,
                adoptPresent !== "unrecorded",
              );
            }
            await tag(eni.id, ip, signal);
          }
          await publicIps.attach(ip, eni, adopt, signal);
          plan.record(ip, instance.id);
          return hosts.placed(instance.id);
        }
        // The record first: a create interrupted after it leaves a tag and no address (harmless),
        // never an address without its record.
        await tag(eni.id, ip, signal);
        await assignOne(eni.id, ip, false, signal).catch(async (err) => {
          await untag([eni.id], ip).catch(() => undefined);
          const doing = `assigning ${ip} to ${eni.id} of host ${hostLabel(instance)} in subnet ${subnet.id}`;
          throw await assignFailure(doing, err, instance, eni, ip);
        });
        // Its public side too, or neither: a create that fails here leaves nothing behind.
        await publicIps.attach(ip, eni, adopt, signal).catch(async (err) => {
          await unassignFrom(eni, ip).catch(() => undefined);
          await untag([eni.id], ip).catch(() => undefined);
          throw err;
        });
        plan.record(ip, instance.id);
        hosts.placed(instance.id);
      },

      async removeIP(rawIp, host, signal) {
        const ip = canonicalAddress(rawIp);
        const { records, keptForOther } = await removeFrom(ip, host, undefined, signal);
        // Its record stays until its public side is gone: a retry finds the address this owner's.
        if (!keptForOther) await publicIps.detach(ip, signal);
        await untag(records, ip);
        plan.record(ip, undefined);
      },

      async moveIP(rawIp, oldHost, newHost, signal) {
        const ip = canonicalAddress(rawIp);
        const family = addressFamily(ip);
        const [{ instance, eni, subnet }, old] = await Promise.all([
          target(newHost, signal),
          hosts.find(oldHost, signal),
        ]);
        blockFor(ip, instance, eni, subnet);
        // Who has the address, read immediately before reassigning: reassignment takes it from
        // whichever interface has it, so that must be the old host, and not another owner's.
        const holder = (await ec2.interfacesInSubnets([subnet.id], signal)).find((n) => holds(n, ip));
        if (holder?.id !== eni.id) {
          const oldEnis = new Set(old?.interfaces.map((n) => n.id));
          const fromOld = holder !== undefined && (oldEnis.has(holder.id) || holder.instanceId === oldHost);
          // A third host with this assignment's own record: a move of its own left it there.
          if (holder && !fromOld && !leftByOwnMove(holder, ip)) {
            throw takenAddress(
              ip,
              `cannot move ${ip} from ${oldHost} to host ${hostLabel(instance)}: ${ip} is used by ${holder.id}` +
                `${holder.instanceId ? ` (instance ${holder.instanceId})` : ""}, not by ${oldHost}`,
            );
          }
          // Whatever `adopt` says: a move is never an adoption.
          const other = holder ? claimedByOther(holder, ip) : "";
          if (holder && other) {
            throw new IpamError(
              "TAKEN_OVER",
              `cannot move ${ip} from ${oldHost} to host ${hostLabel(instance)}: ${holder.id} has it recorded for ` +
                `another assignment (tag ${ownerTagKey(ip)}=${other}); it is not this assignment's to move: ` +
                `another stack or a renamed resource took it over (adopt: true); remove this assignment from the ` +
                `program (its delete leaves the address to its owner), or free it there and run pulumi up again`,
            );
          }
          await tag(eni.id, ip, signal);
          // EC2 reassigns no IPv6 address: off the old interface first, and back on it if the new
          // one refuses it, so that exactly one interface has it whatever happens.
          const takenOff = family === 6 && holder ? await unassignFrom(holder, ip, signal) : false;
          await assignOne(eni.id, ip, true, signal).catch(async (err) => {
            if (takenOff) await ec2.assignIpv6(holder!.id, [ip]).catch(() => undefined);
            const doing = `moving ${ip} to ${eni.id} of host ${hostLabel(instance)} in subnet ${subnet.id}`;
            throw await assignFailure(doing, err, instance, eni, undefined, family);
          });
          // Below, only the old host's interfaces are seen to.
          if (holder && !fromOld && !takenOff) await unassignFrom(holder, ip, signal);
          hosts.placed(instance.id);
        } else if (tagged !== undefined && recordOf(holder, ip) !== tagged) {
          // On the target already without this assignment's record (its own would be there: the
          // record goes first): somebody else's, put there while the address was away.
          throw new IpamError(
            "ADDRESS_IN_USE",
            `cannot move ${ip} from ${oldHost} to host ${hostLabel(instance)}: ${ip} is already ${asAddress(ip)} of ` +
              `its interface ${eni.id}, ${whose(holder, ip)}: the address is somebody else's now; free it there ` +
              `and run pulumi up again, or remove this assignment from the program (its delete leaves the ` +
              `address to its owner)`,
          );
        }
        // EC2 takes a reassigned address off its previous interface; make sure, since a stale holder
        // would keep answering for it.
        plan.record(ip, instance.id);
        // Its public address follows it (EC2 may have moved the association with a reassigned address).
        await publicIps.attach(ip, eni, false, signal);
        const { records } = await removeFrom(ip, oldHost, eni.id, signal);
        const wasOurs = holder && holder.id !== eni.id && recordOf(holder, ip) === tagged ? [holder.id] : [];
        await untag([...new Set([...records, ...wasOurs])], ip);
      },

      async checkIP(rawIp, host, signal) {
        const ip = canonicalAddress(rawIp);
        const instance = await hosts.find(host, signal);
        if (!instance) {
          throw new IpamError(
            "DRIFT",
            `egress IP ${ip} is not on host ${host}: there is no EC2 instance ${host} in ${region} any more; ` +
              `run pulumi up to place the address on another host of its availability zone`,
          );
        }
        if (instance.state !== "running" && instance.state !== "pending") {
          throw new IpamError(
            "DRIFT",
            `egress IP ${ip} is not served by host ${hostLabel(instance)}: the instance is ${instance.state}; ` +
              `run pulumi up to move the address to a running host of ${instance.availabilityZone}`,
          );
        }
        const interfaces = await interfacesNow(instance, signal);
        const holder = interfaces.find((n) => holds(n, ip));
        if (!holder) {
          const enis = interfaces.map((n) => n.id).join(", ") || "none";
          throw new IpamError(
            "DRIFT",
            `egress IP ${ip} is not assigned to host ${hostLabel(instance)} (interfaces: ${enis}); ` +
              `run pulumi up to put it back`,
          );
        }
        // There, but another owner's now (adopted by another stack or a renamed resource): not this
        // assignment's, and not for the next `up` to take back.
        const other = claimedByOther(holder, ip);
        if (other) {
          throw new IpamError(
            "TAKEN_OVER",
            `egress IP ${ip} on host ${hostLabel(instance)} is not this assignment's any more: its interface ` +
              `${holder.id} has it recorded for another assignment (tag ${ownerTagKey(ip)}=${other}); pulumi up ` +
              `will not take it back: remove this assignment from the program (its delete leaves the address to ` +
              `its owner), or have that owner release it and run pulumi up to put it back`,
          );
        }
        const problem = await publicIps.problem(ip, holder.id, signal).catch((err) => {
          throw ec2Failure(
            `reading the Elastic IP of ${ip}`,
            err,
            `the credentials need ec2:DescribeAddresses`,
          );
        });
        if (problem) {
          throw new IpamError(
            "DRIFT",
            `egress IP ${ip} on host ${hostLabel(instance)} does not leave from its public address: ${problem}; ` +
              `run pulumi up to associate it with ${ip} on ${holder.id}`,
          );
        }
      },

      publicAddress: (rawIp, signal) => publicIps.publicAddress(canonicalAddress(rawIp), signal),

      plannedPublicAddress: (rawIp, signal) => publicIps.planned(canonicalAddress(rawIp), signal),

      async attachPublicAddress(rawIp, host, signal) {
        const ip = canonicalAddress(rawIp);
        if (elasticIpFor(config.elasticIps, ip) === undefined) return;
        const instance = await mustFind(host, signal);
        const holder = (await interfacesNow(instance, signal)).find((n) => holds(n, ip));
        if (!holder) {
          throw new IpamError(
            "DRIFT",
            `cannot give egress IP ${ip} its Elastic IP: it is not on host ${hostLabel(instance)} any more; ` +
              `run pulumi refresh, then pulumi up to put it back with its Elastic IP`,
          );
        }
        const other = claimedByOther(holder, ip);
        if (other) {
          throw new IpamError(
            "TAKEN_OVER",
            `cannot give egress IP ${ip} its Elastic IP: its interface ${holder.id} has it recorded for another ` +
              `assignment (tag ${ownerTagKey(ip)}=${other}); remove this assignment from the program (its delete ` +
              `leaves the address to its owner)`,
          );
        }
        await publicIps.attach(ip, holder, false, signal);
      },

      detachPublicAddress: (rawIp, signal, keep) => publicIps.detach(canonicalAddress(rawIp), signal, keep),
    };
    return methods;
  };

  const common: Omit<EgressIPProvisioner, OwnedMethods> = {
    findHostForNewIP: (failureDomain, signal) => hosts.choose(failureDomain, signal),

    findHostForIP: (ip, failureDomain, signal) => plan.choose(canonicalAddress(ip), failureDomain, signal),

    hostServes: (host, failureDomain, signal) => hosts.serves(host, failureDomain, signal),

    async addRandomIP(host, signal) {
      const { instance, eni } = await target(host, signal);
      const before = new Set(eni.addresses.map((a) => a.ip));
      const listed = await ec2.assign(eni.id, { count: 1 }, signal).catch(async (err) => {
        const doing = `assigning a new address to ${eni.id} of host ${hostLabel(instance)}`;
        throw await assignFailure(doing, err, instance, eni);
      });
      const fresh = listed.length === 1 ? listed : listed.filter((ip) => !before.has(ip));
      if (fresh.length !== 1) {
        throw new IpamError(
          "PROVISIONER_FAILED",
          `asked EC2 for one new address on ${eni.id} of host ${hostLabel(instance)} and got ${fresh.length} ` +
            `(${fresh.join(", ") || "none"}); check the interface and unassign what is not wanted`,
        );
      }
      hosts.placed(instance.id);
      return canonicalAddress(fresh[0]!);
    },

    async assignCIDR() {},

    async usedAddresses(cidrs, signal) {
      // Every address of every interface, IPv4 and IPv6, and what delegated prefixes hold (an IPv6
      // prefix as one block), in address order.
      const used = new Map<string, AddressBlock>();
      for (const eni of await interfacesWithin(cidrs, signal)) {
        const inside = eni.addresses
          .map((a) => a.ip)
          .filter((ip) => cidrs.some((c) => prefixContains(c, ip)));
        for (const text of [...inside, ...prefixUseWithin(eni, cidrs)])
          used.set(text, parseAddressBlock(text));
      }
      const order = ([, a]: [string, AddressBlock], [, b]: [string, AddressBlock]) =>
        a.family - b.family || (a.first < b.first ? -1 : a.first > b.first ? 1 : 0);
      return [...used].sort(order).map(([text]) => text);
    },

    async placements(cidrs, signal) {
      const enis = await interfacesWithin(cidrs, signal);
      const where = ["--region", region, ...(config.endpoint ? ["--endpoint-url", config.endpoint] : [])];
      // With elasticIps, each address's Elastic IP: every one of the region in one call (a few, by quota).
      const eips =
        config.elasticIps === undefined
          ? undefined
          : await ec2.elasticIps({ filters: [] }, signal).catch((err) => {
              throw ec2Failure(
                `reading the Elastic IPs of ${region}`,
                err,
                `the credentials need ec2:DescribeAddresses`,
              );
            });
      // An allocated one is tagged with the owner the interface's record names.
      const publicSide = (eni: Eni, ip: string) =>
        eips
          ? elasticIpPlacement(config.elasticIps, eips, eni.id, ip, eni.tags?.[ownerTagKey(ip)] ?? "", where)
          : {};
      // A host may be named by its private DNS name in state (the OpenShift node name on AWS).
      const ids = [...new Set(enis.flatMap((n) => (n.instanceId ? [n.instanceId] : [])))];
      const dnsNames = new Map<string, string>();
      for (let i = 0; i < ids.length; i += 200) {
        const filter = [{ Name: "instance-id", Values: ids.slice(i, i + 200) }];
        for (const instance of await ec2.instances(filter, signal)) {
          if (instance.privateDnsName) dnsNames.set(instance.id, instance.privateDnsName);
        }
      }
      return enis.flatMap((eni) =>
        eni.addresses
          .filter((a) => !a.primary && cidrs.some((c) => prefixContains(c, a.ip)))
          .map((a) => ({
            ip: canonicalAddress(a.ip),
            host: eni.instanceId ?? eni.id,
            aliases: eni.instanceId && dnsNames.has(eni.instanceId) ? [dnsNames.get(eni.instanceId)!] : [],
            removeCommand:
              addressFamily(a.ip) === 6
                ? shellCommand(
                    ...["aws", "ec2", "unassign-ipv6-addresses", ...where],
                    ...["--network-interface-id", eni.id, "--ipv6-addresses", a.ip],
                  )
                : shellCommand(
                    ...["aws", "ec2", "unassign-private-ip-addresses", ...where],
                    ...["--network-interface-id", eni.id, "--private-ip-addresses", a.ip],
                  ),
            // The owner record: which assignment's tag (a VPC CNI pod or warm IP has none).
            ...(eni.tags?.[ownerTagKey(a.ip)] ? { owners: [eni.tags[ownerTagKey(a.ip)]!] } : {}),
            ...publicSide(eni, canonicalAddress(a.ip)),
          })),
      );
    },
    placementOwners: "hashed",
  };
  return {
    ...common,
    ...owned(config.owner, config.adoptPresent),
    forOwner: (owner, adopt) => ({ ...common, ...owned(owner, adopt) }),
  };
}
