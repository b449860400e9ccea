import { IpamError } from "../../core/ipam-error";
import { leastLoaded } from "../least-loaded";
import { addressFamily, familyName, type AddressFamily } from "../../allocator/address";
import { prefixContains } from "../../allocator/prefix";
import type { Ec2Instance } from "./ec2";
import { hostLabel, primaryInterface } from "./hosts";
import { prefixCount } from "./prefixes";
import { interfaceTagLimit, isOwnerTagKey, ownerTagKey } from "./owner-tag";

/** What a {@link HostPlan} reads: the zone's eligible instances, subnets, instance type limits. */
export interface HostPlanSource {
  /** The zone's eligible instances (running, tagged) as EC2 reports them. */
  eligible(zone: string, signal?: AbortSignal): Promise<Ec2Instance[]>;
  /** A subnet's CIDR blocks: its IPv4 CIDR, then its IPv6 ones (one string: its IPv4 CIDR alone). */
  subnetCidr(subnetId: string, signal?: AbortSignal): Promise<string | string[]>;
  /** Addresses of the family (default IPv4) an interface of the type takes (IPv4: the primary included). */
  ipsPerInterface(instanceType: string, signal?: AbortSignal, family?: AddressFamily): Promise<number>;
  /** The tag keys of these interfaces as they are now (DescribeInstances leaves tags out). */
  interfaceTags(eniIds: string[], signal?: AbortSignal): Promise<Map<string, string[]>>;
  /** How a zone's hosts are described in messages (`tagged role=egress`, or ""). */
  tagText: string;
  region: string;
}

/**
 * The host of a known address in an availability zone, chosen so that `preview` and `up` agree:
 * a pure function of the zone's instances as this process first read them and of the address,
 * not of the order the engine checks resources in.
 *
 * Candidates are the zone's eligible instances whose primary interface is in the subnet that
 * contains the address (EC2 puts a secondary IP, or an IPv6 address, only in a block of the
 * interface's own subnet) and that have a free slot of the address's family for one more address
 * (per instance type, IPv4's primary address included; a delegated prefix takes a slot) and room
 * for one more tag on the interface (each address gets its owner record there, and EC2 takes 50
 * tags), counting the addresses this process planned. Among them: the fewest secondary addresses and prefixes of
 * that family on the primary interface as EC2 reported them, ties by a hash of the address and the instance ID
 * ({@link leastLoaded}). The zone's list is read once per process (a deployment) and kept: a
 * later read would count this deployment's own placements and change the order.
 */
export class HostPlan {
  private readonly zones = new Map<string, Promise<ZoneView>>();
  /** Address → the instance this process planned or placed it on (undefined: taken off). */
  private readonly planned = new Map<string, string | undefined>();

  constructor(private readonly source: HostPlanSource) {}

  /**
   * The instance for `ip` in `zone`.
   * @throws IpamError HOST_UNAVAILABLE naming the zone, the address, and why each eligible instance
   * cannot take it (a full interface with its count of addresses or of tags).
   */
  async choose(ip: string, zone: string, signal?: AbortSignal): Promise<string> {
    const { instances, tags } = await this.view(zone, signal);
    if (instances.length === 0) {
      throw new IpamError(
        "HOST_UNAVAILABLE",
        `no eligible host in availability zone "${zone}" of ${this.source.region}: no running EC2 instance` +
          `${this.source.tagText} is there; start one, or check the failure domain name and the provisioner's hostTags`,
      );
    }
    const family = addressFamily(ip);
    const holderOf = new Map<string, string | undefined>();
    for (const i of instances) for (const a of primaryInterface(i)?.addresses ?? []) holderOf.set(a.ip, i.id);
    for (const [a, id] of this.planned) holderOf.set(a, id);
    const skipped: string[] = [];
    const tagsFull: string[] = [];
    const usable: { instance: Ec2Instance; load: number }[] = [];
    for (const instance of instances) {
      const eni = primaryInterface(instance);
      if (!eni) {
        skipped.push(`${hostLabel(instance)}: no network interface`);
        continue;
      }
      const cidrs = [await this.source.subnetCidr(eni.subnetId, signal)].flat();
      if (!cidrs.some((c) => prefixContains(c, ip))) {
        skipped.push(
          `${hostLabel(instance)}: its interface ${eni.id} is in ${eni.subnetId} (${cidrs.join(", ")})`,
        );
        continue;
      }
      const limit = await this.source.ipsPerInterface(instance.instanceType, signal, family);
      // What the interface has (IPv4: the primary included, as in the limit) and what this process
      // planned there; the address itself needs no new slot.
      const prefixes = prefixCount(eni, family);
      const used =
        [...holderOf].filter(([a, id]) => id === instance.id && a !== ip && addressFamily(a) === family)
          .length + prefixes;
      if (used >= limit) {
        skipped.push(
          limit === 0
            ? `${hostLabel(instance)}: a ${instance.instanceType} interface takes no ${familyName(family)} address`
            : `${hostLabel(instance)}: full (${instance.instanceType}: ${used}/${limit}${family === 6 ? " IPv6" : ""})`,
        );
        continue;
      }
      // Each address gets its owner record on the interface: counted here, not refused by
      // CreateTags during up. One whose record is there already (a retried create) needs none.
      const keys = new Set(tags.get(eni.id) ?? []);
      for (const [a, id] of this.planned) if (id === instance.id) keys.add(ownerTagKey(a));
      if (!keys.has(ownerTagKey(ip)) && keys.size >= interfaceTagLimit) {
        const records = [...keys].filter(isOwnerTagKey).length;
        tagsFull.push(eni.id);
        skipped.push(
          `${hostLabel(instance)}: its interface ${eni.id} has ${keys.size}/${interfaceTagLimit} tags (EC2's ` +
            `limit; ${records} of them egress-ipam/<address> records, one per egress address)`,
        );
        continue;
      }
      const secondaries = eni.addresses.filter(
        (a) => !a.primary && a.ip !== ip && addressFamily(a.ip) === family,
      ).length;
      usable.push({ instance, load: secondaries + prefixes });
    }
    if (usable.length === 0) {
      const untag =
        tagsFull.length === 0
          ? ""
          : `remove tags ${tagsFull.join(", ")} ${tagsFull.length === 1 ? "does" : "do"} not need, or `;
      throw new IpamError(
        "HOST_UNAVAILABLE",
        `no host in availability zone "${zone}" can take ${ip}: ${skipped.join("; ")}; ${untag}add a running instance` +
          `${this.source.tagText} with room in the subnet that contains ${ip} (a larger instance type has more ` +
          `room), or plan the address from a pool whose range lies in an eligible instance's subnet`,
      );
    }
    const best = leastLoaded(
      usable,
      (u) => u.load,
      (u) => u.instance.id,
      ip,
    ).instance.id;
    this.planned.set(ip, best);
    return best;
  }

  /** Records where `ip` is now (an instance ID), or that it left every instance (undefined). */
  record(ip: string, instanceId: string | undefined): void {
    this.planned.set(ip, instanceId);
  }

  private view(zone: string, signal?: AbortSignal): Promise<ZoneView> {
    let view = this.zones.get(zone);
    if (!view) {
      view = this.source.eligible(zone, signal).then(async (instances) => {
        const enis = instances.flatMap((i) => primaryInterface(i)?.id ?? []);
        const tags = enis.length === 0 ? new Map() : await this.source.interfaceTags(enis, signal);
        return { instances, tags };
      });
      view.catch(() => this.zones.delete(zone));
      this.zones.set(zone, view);
    }
    return view;
  }
}

/** A zone as a plan reads it once: its eligible instances and the tag keys of their primary interfaces. */
interface ZoneView {
  instances: Ec2Instance[];
  tags: Map<string, string[]>;
}
