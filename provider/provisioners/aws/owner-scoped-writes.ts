import { IpamError } from "../../core/ipam-error";
import { addressFamily, canonicalAddress } from "../../allocator";
import type { Eni } from "./ec2";
import { hostLabel } from "./hosts";
import { prefixHolding } from "./prefixes";
import { takenAddress } from "../taken-address";
import { ec2ErrorCode } from "./ec2-retry";
import { ec2Failure } from "./ec2-failure";
import type { AdoptPresent, EgressIPProvisioner } from "../egress-ip-provisioner";
import { elasticIpFor } from "../config/aws-provisioner-config";
import { publicAddresses } from "./elastic-ips";
import { ownerTagKey, ownerTagValue } from "./owner-tag";
import type { AwsPlatform } from "./aws-platform";
import { OwnerRecords } from "./owner-records";

const holds = (eni: Eni, ip: string) => eni.addresses.some((a) => a.ip === ip);

/** What an egress address is on an interface, for messages: `a secondary IP`, `an IPv6 address`. */
const asAddress = (ip: string) => (addressFamily(ip) === 6 ? "an IPv6 address" : "a secondary IP");

/** The methods that read or write the owner record (see `AwsProvisioner.forOwner`). */
export type OwnedMethods =
  | "addSpecifiedIP"
  | "removeIP"
  | "moveIP"
  | "checkIP"
  | "publicAddress"
  | "plannedPublicAddress"
  | "attachPublicAddress"
  | "detachPublicAddress";

/**
 * The methods that put addresses on and take them off, acting for one owner (see
 * `AwsProvisioner.forOwner`); without one, no tag is written or checked.
 */
export class OwnerScopedWrites implements Pick<EgressIPProvisioner, OwnedMethods> {
  private readonly adopt: boolean;
  private readonly records: OwnerRecords;
  private readonly publicIps: ReturnType<typeof publicAddresses>;

  constructor(
    private readonly platform: AwsPlatform,
    owner: string | undefined,
    private readonly adoptPresent?: AdoptPresent,
  ) {
    this.adopt = adoptPresent === true;
    this.records = new OwnerRecords(platform.ec2, owner === undefined ? undefined : ownerTagValue(owner));
    // The Elastic IPs this package allocates are tagged with their owner; without one, the owner "".
    this.publicIps = publicAddresses(
      platform.ec2,
      platform.config.elasticIps,
      this.records.tagged ?? ownerTagValue(""),
      platform.region,
    );
  }

  /**
   * Takes `ip` off the interface; an interface or address already gone is fine. Returns whether
   * it was taken off now.
   */
  private readonly unassignFrom = async (eni: Eni, ip: string, signal?: AbortSignal): Promise<boolean> => {
    const { hosts } = this.platform;
    const platform = this.platform;
    try {
      await platform.unassignOne(eni.id, ip, signal);
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
  private readonly removeFrom = async (
    ip: string,
    host: string,
    keep: string | undefined,
    signal?: AbortSignal,
  ) => {
    const { unassignFrom } = this;
    const { tagged } = this.records;
    const ownerRecords = this.records;
    const { hosts } = this.platform;
    const instance = await hosts.find(host, signal);
    const out = { records: [] as string[], keptForOther: false };
    if (!instance) return out;
    for (const eni of await ownerRecords.interfacesNow(instance, signal)) {
      if (eni.id === keep) continue;
      if (ownerRecords.claimedByOther(eni, ip)) {
        out.keptForOther ||= holds(eni, ip);
        continue;
      }
      const ours = tagged !== undefined && ownerRecords.recordOf(eni, ip) === tagged;
      if (ours) out.records.push(eni.id);
      if (!eni.addresses.some((a) => a.ip === ip && !a.primary)) continue;
      // This package places addresses on the primary interface only: on another one (a pod's
      // address the VPC CNI put on eth1), an address without this owner's record is somebody else's.
      if (!ours && (eni.deviceIndex ?? 0) !== 0) continue;
      await unassignFrom(eni, ip, signal);
    }
    return out;
  };

  async addSpecifiedIP(rawIp: string, host: string, signal?: AbortSignal): Promise<void> {
    const { adopt, adoptPresent, publicIps, unassignFrom } = this;
    const { tagged } = this.records;
    const ownerRecords = this.records;
    const { ec2, hosts, plan } = this.platform;
    const platform = this.platform;
    const ip = canonicalAddress(rawIp);
    const { instance, eni, subnet } = await platform.target(host, signal);
    platform.blockFor(ip, instance, eni, subnet);
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
    if (holder?.instanceId && holder.id !== eni.id && ownerRecords.leftByOwnMove(holder, ip)) {
      // Moved back from where the interrupted move left it (its record and all).
      return this.moveIP(ip, holder.instanceId, host, signal);
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
      if (tagged !== undefined && ownerRecords.recordOf(holder, ip) !== tagged) {
        if (!adopt) {
          // Adopting is the way out of a create only: putting an address back never takes it over.
          throw takenAddress(
            ip,
            `cannot put ${ip} on host ${hostLabel(instance)}: ${ip} is already ${asAddress(ip)} of its interface ` +
              `${eni.id}, ${ownerRecords.whose(holder, ip)}: the address is somebody else's (a VPC CNI warm IP, another ` +
              `tool, another stack)`,
            adoptPresent !== "unrecorded",
          );
        }
        await ownerRecords.tag(eni.id, ip, signal);
      }
      await publicIps.attach(ip, eni, adopt, signal);
      plan.record(ip, instance.id);
      return hosts.placed(instance.id);
    }
    // The record first: a create interrupted after it leaves a tag and no address (harmless),
    // never an address without its record.
    await ownerRecords.tag(eni.id, ip, signal);
    await platform.assignOne(eni.id, ip, false, signal).catch(async (err) => {
      await ownerRecords.untag([eni.id], ip).catch(() => undefined);
      const doing = `assigning ${ip} to ${eni.id} of host ${hostLabel(instance)} in subnet ${subnet.id}`;
      throw await platform.assignFailure(doing, err, instance, eni, ip);
    });
    // Its public side too, or neither: a create that fails here leaves nothing behind.
    await publicIps.attach(ip, eni, adopt, signal).catch(async (err) => {
      await unassignFrom(eni, ip).catch(() => undefined);
      await ownerRecords.untag([eni.id], ip).catch(() => undefined);
      throw err;
    });
    plan.record(ip, instance.id);
    hosts.placed(instance.id);
  }

  async removeIP(rawIp: string, host: string, signal?: AbortSignal): Promise<void> {
    const { publicIps, removeFrom } = this;
    const ownerRecords = this.records;
    const { plan } = this.platform;
    const ip = canonicalAddress(rawIp);
    const { records, keptForOther } = await removeFrom(ip, host, undefined, signal);
    // Its record stays until its public side is gone: a retry finds the address this owner's.
    if (!keptForOther) await publicIps.detach(ip, signal);
    await ownerRecords.untag(records, ip);
    plan.record(ip, undefined);
  }

  async moveIP(rawIp: string, oldHost: string, newHost: string, signal?: AbortSignal): Promise<void> {
    const { publicIps, unassignFrom, removeFrom } = this;
    const { tagged } = this.records;
    const ownerRecords = this.records;
    const { ec2, hosts, plan } = this.platform;
    const platform = this.platform;
    const ip = canonicalAddress(rawIp);
    const family = addressFamily(ip);
    const [{ instance, eni, subnet }, old] = await Promise.all([
      platform.target(newHost, signal),
      hosts.find(oldHost, signal),
    ]);
    platform.blockFor(ip, instance, eni, subnet);
    // Who has the address, read immediately before reassigning: reassignment takes it from
    // whichever interface has it, so that must be the old host, and not another owner's.
    const holder = (await ec2.interfacesInSubnets([subnet.id], signal)).find((n) => holds(n, ip));
    if (holder?.id !== eni.id) {
      const oldEnis = new Set(old?.interfaces.map((n) => n.id));
      const fromOld = holder !== undefined && (oldEnis.has(holder.id) || holder.instanceId === oldHost);
      // A third host with this assignment's own record: a move of its own left it there.
      if (holder && !fromOld && !ownerRecords.leftByOwnMove(holder, ip)) {
        throw takenAddress(
          ip,
          `cannot move ${ip} from ${oldHost} to host ${hostLabel(instance)}: ${ip} is used by ${holder.id}` +
            `${holder.instanceId ? ` (instance ${holder.instanceId})` : ""}, not by ${oldHost}`,
        );
      }
      // Whatever `adopt` says: a move is never an adoption.
      const other = holder ? ownerRecords.claimedByOther(holder, ip) : "";
      if (holder && other) {
        throw new IpamError(
          "TAKEN_OVER",
          `cannot move ${ip} from ${oldHost} to host ${hostLabel(instance)}: ${holder.id} has it recorded for ` +
            `another assignment (tag ${ownerTagKey(ip)}=${other}); it is not this assignment's to move: ` +
            `another stack or a renamed resource took it over (adopt: true); remove this assignment from the ` +
            `program (its delete leaves the address to its owner), or free it there and run pulumi up again`,
        );
      }
      await ownerRecords.tag(eni.id, ip, signal);
      // EC2 reassigns no IPv6 address: off the old interface first, and back on it if the new
      // one refuses it, so that exactly one interface has it whatever happens.
      const takenOff = family === 6 && holder ? await unassignFrom(holder, ip, signal) : false;
      await platform.assignOne(eni.id, ip, true, signal).catch(async (err) => {
        if (takenOff) await ec2.assignIpv6(holder!.id, [ip]).catch(() => undefined);
        const doing = `moving ${ip} to ${eni.id} of host ${hostLabel(instance)} in subnet ${subnet.id}`;
        throw await platform.assignFailure(doing, err, instance, eni, undefined, family);
      });
      // Below, only the old host's interfaces are seen to.
      if (holder && !fromOld && !takenOff) await unassignFrom(holder, ip, signal);
      hosts.placed(instance.id);
    } else if (tagged !== undefined && ownerRecords.recordOf(holder, ip) !== tagged) {
      // On the target already without this assignment's record (its own would be there: the
      // record goes first): somebody else's, put there while the address was away.
      throw new IpamError(
        "ADDRESS_IN_USE",
        `cannot move ${ip} from ${oldHost} to host ${hostLabel(instance)}: ${ip} is already ${asAddress(ip)} of ` +
          `its interface ${eni.id}, ${ownerRecords.whose(holder, ip)}: the address is somebody else's now; free it there ` +
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
    const wasOurs =
      holder && holder.id !== eni.id && ownerRecords.recordOf(holder, ip) === tagged ? [holder.id] : [];
    await ownerRecords.untag([...new Set([...records, ...wasOurs])], ip);
  }

  async checkIP(rawIp: string, host: string, signal?: AbortSignal): Promise<void> {
    const { publicIps } = this;
    const ownerRecords = this.records;
    const { hosts, region } = this.platform;
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
    const interfaces = await ownerRecords.interfacesNow(instance, signal);
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
    const other = ownerRecords.claimedByOther(holder, ip);
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
      throw ec2Failure(`reading the Elastic IP of ${ip}`, err, `the credentials need ec2:DescribeAddresses`);
    });
    if (problem) {
      throw new IpamError(
        "DRIFT",
        `egress IP ${ip} on host ${hostLabel(instance)} does not leave from its public address: ${problem}; ` +
          `run pulumi up to associate it with ${ip} on ${holder.id}`,
      );
    }
  }

  async attachPublicAddress(rawIp: string, host: string, signal?: AbortSignal): Promise<void> {
    const { publicIps } = this;
    const ownerRecords = this.records;
    const { config } = this.platform;
    const platform = this.platform;
    const ip = canonicalAddress(rawIp);
    if (elasticIpFor(config.elasticIps, ip) === undefined) return;
    const instance = await platform.mustFind(host, signal);
    const holder = (await ownerRecords.interfacesNow(instance, signal)).find((n) => holds(n, ip));
    if (!holder) {
      throw new IpamError(
        "DRIFT",
        `cannot give egress IP ${ip} its Elastic IP: it is not on host ${hostLabel(instance)} any more; ` +
          `run pulumi refresh, then pulumi up to put it back with its Elastic IP`,
      );
    }
    const other = ownerRecords.claimedByOther(holder, ip);
    if (other) {
      throw new IpamError(
        "TAKEN_OVER",
        `cannot give egress IP ${ip} its Elastic IP: its interface ${holder.id} has it recorded for another ` +
          `assignment (tag ${ownerTagKey(ip)}=${other}); remove this assignment from the program (its delete ` +
          `leaves the address to its owner)`,
      );
    }
    await publicIps.attach(ip, holder, false, signal);
  }

  publicAddress(rawIp: string, signal?: AbortSignal): Promise<string | undefined> {
    return this.publicIps.publicAddress(canonicalAddress(rawIp), signal);
  }

  plannedPublicAddress(rawIp: string, signal?: AbortSignal): Promise<string | undefined> {
    return this.publicIps.planned(canonicalAddress(rawIp), signal);
  }

  detachPublicAddress(rawIp: string, signal?: AbortSignal, keep?: string): Promise<void> {
    return this.publicIps.detach(canonicalAddress(rawIp), signal, keep);
  }
}
