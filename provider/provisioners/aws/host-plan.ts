import { IpamError } from "../../core/ipam-error";
import { leastLoaded } from "../least-loaded";
import { parseAddress } from "../../allocator/address";
import { parsePrefix } from "../../allocator/prefix";
import type { Ec2Instance } from "./ec2";
import { hostLabel, primaryInterface } from "./hosts";

/** What a {@link HostPlan} reads: the zone's eligible instances, subnets, instance type limits. */
export interface HostPlanSource {
  /** The zone's eligible instances (running, tagged) as EC2 reports them. */
  eligible(zone: string, signal?: AbortSignal): Promise<Ec2Instance[]>;
  /** A subnet's IPv4 CIDR. */
  subnetCidr(subnetId: string, signal?: AbortSignal): Promise<string>;
  /** IPv4 addresses an interface of the type takes, the primary included. */
  ipsPerInterface(instanceType: string, signal?: AbortSignal): Promise<number>;
  /** How a zone's hosts are described in messages (`tagged role=egress`, or ""). */
  tagText: string;
  region: string;
}

function inCidr(ip: string, cidr: string): boolean {
  const a = parseAddress(ip);
  const p = parsePrefix(cidr);
  return a.family === p.family && a.value >= p.network && a.value <= p.last;
}

/**
 * The host of a known address in an availability zone, chosen so that `preview` and `up` agree:
 * a pure function of the zone's instances as this process first read them and of the address,
 * not of the order the engine checks resources in.
 *
 * Candidates are the zone's eligible instances whose primary interface is in the subnet that
 * contains the address (EC2 puts a secondary IP only in the interface's own subnet) and that have
 * a free slot for one more address (per instance type, the primary address included; a delegated
 * prefix takes a slot), counting
 * the addresses this process planned. Among them: the fewest secondary addresses and prefixes on the
 * primary interface as EC2 reported them, ties by a hash of the address and the instance ID
 * ({@link leastLoaded}). The zone's list is read once per process (a deployment) and kept: a
 * later read would count this deployment's own placements and change the order.
 */
export class HostPlan {
  private readonly zones = new Map<string, Promise<Ec2Instance[]>>();
  /** Address → the instance this process planned or placed it on (undefined: taken off). */
  private readonly planned = new Map<string, string | undefined>();

  constructor(private readonly source: HostPlanSource) {}

  /**
   * The instance for `ip` in `zone`.
   * @throws IpamError HOST_UNAVAILABLE naming the zone, the address, and why each eligible instance cannot take it.
   */
  async choose(ip: string, zone: string, signal?: AbortSignal): Promise<string> {
    const instances = await this.view(zone, signal);
    if (instances.length === 0) {
      throw new IpamError(
        "HOST_UNAVAILABLE",
        `no eligible host in availability zone "${zone}" of ${this.source.region}: no running EC2 instance` +
          `${this.source.tagText} is there; start one, or check the failure domain name and the provisioner's hostTags`,
      );
    }
    const holderOf = new Map<string, string | undefined>();
    for (const i of instances) for (const a of primaryInterface(i)?.addresses ?? []) holderOf.set(a.ip, i.id);
    for (const [a, id] of this.planned) holderOf.set(a, id);
    const skipped: string[] = [];
    const usable: { instance: Ec2Instance; load: number }[] = [];
    for (const instance of instances) {
      const eni = primaryInterface(instance);
      if (!eni) {
        skipped.push(`${hostLabel(instance)}: no network interface`);
        continue;
      }
      const cidr = await this.source.subnetCidr(eni.subnetId, signal);
      if (!inCidr(ip, cidr)) {
        skipped.push(`${hostLabel(instance)}: its interface ${eni.id} is in ${eni.subnetId} (${cidr})`);
        continue;
      }
      const limit = await this.source.ipsPerInterface(instance.instanceType, signal);
      // The primary address counts (the limit includes it); the address itself needs no new slot.
      const prefixes = eni.prefixes?.length ?? 0;
      const used = [...holderOf].filter(([a, id]) => id === instance.id && a !== ip).length + prefixes;
      if (used >= limit) {
        skipped.push(`${hostLabel(instance)}: full (${instance.instanceType}: ${used}/${limit})`);
        continue;
      }
      const secondaries = eni.addresses.filter((a) => !a.primary && a.ip !== ip).length;
      usable.push({ instance, load: secondaries + prefixes });
    }
    if (usable.length === 0) {
      throw new IpamError(
        "HOST_UNAVAILABLE",
        `no host in availability zone "${zone}" can take ${ip}: ${skipped.join("; ")}; add a running instance` +
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

  private view(zone: string, signal?: AbortSignal): Promise<Ec2Instance[]> {
    let instances = this.zones.get(zone);
    if (!instances) {
      instances = this.source.eligible(zone, signal);
      instances.catch(() => this.zones.delete(zone));
      this.zones.set(zone, instances);
    }
    return instances;
  }
}
