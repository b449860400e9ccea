import { IpamError } from "../../core/ipam-error";
import type { Filter } from "@aws-sdk/client-ec2";
import { addressFamily, type AddressFamily } from "../../allocator";
import { prefixCount } from "./prefixes";
import { leastLoaded } from "../least-loaded";
import type { Ec2, Ec2Instance, Eni } from "./ec2";

/** Instance IDs as EC2 writes them; anything else is taken for a private DNS name (a node name). */
const instanceIdPattern = /^i-[0-9a-f]{8,17}$/;

/** The primary interface of an instance (device index 0), where egress IPs go. */
export function primaryInterface(instance: Ec2Instance): Eni | undefined {
  return instance.interfaces.find((n) => n.deviceIndex === 0) ?? instance.interfaces[0];
}

/**
 * The interface's slots of `family` in use: its addresses of that family (the primary included) and
 * its delegated prefixes of that family, each of which takes a slot as an address does.
 */
export function slotsUsed(eni: Eni, family: AddressFamily): number {
  return eni.addresses.filter((a) => addressFamily(a.ip) === family).length + prefixCount(eni, family);
}

/** An instance as error messages name it: `i-0abc (ip-10-0-1-4.ec2.internal, us-east-1a)`. */
export function hostLabel(instance: Ec2Instance): string {
  const where = [instance.privateDnsName, instance.availabilityZone].filter(Boolean).join(", ");
  return where ? `${instance.id} (${where})` : instance.id;
}

/** Settings of a {@link HostInventory}. */
export interface HostInventoryOptions {
  region: string;
  /** Tags every eligible host carries; none means every running instance is eligible. */
  hostTags: Record<string, string>;
  /** How long one availability zone's list of eligible hosts is reused by `choose`. */
  ttlMs: number;
}

interface Snapshot {
  at: number;
  instances: Promise<Ec2Instance[]>;
}

/**
 * The hosts of one provisioner: finds an instance by ID or private DNS name, and picks the least
 * loaded eligible instance of an availability zone.
 *
 * The engine checks resources one at a time, and each check may ask for a host, so a zone's list
 * of eligible instances is fetched once and reused for `ttlMs`. Load is what EC2 reported then,
 * plus the placements this process planned (`choose`) and finished (`placed`) since, so parallel
 * plans spread over the zone's hosts instead of all landing on the one that looked emptiest. That
 * depends on the order of the questions: a known address is planned by `HostPlan` (host-plan.ts) instead.
 */
export class HostInventory {
  private readonly zones = new Map<string, Snapshot>();
  /** Hosts chosen by `choose` whose placement has not finished yet. */
  private readonly planned = new Map<string, number>();
  /** Net placements finished since the zone's snapshot (negative for removals). */
  private readonly changed = new Map<string, number>();

  constructor(
    private readonly ec2: Ec2,
    private readonly options: HostInventoryOptions,
  ) {}

  /** The host tags as messages say them: ` tagged k=v, …`, or "" without tags. */
  get tagText(): string {
    const tags = Object.entries(this.options.hostTags);
    return tags.length > 0 ? ` tagged ${tags.map(([k, v]) => `${k}=${v}`).join(", ")}` : "";
  }

  /** The instance a host name denotes: by instance ID, else by private DNS name (running first). */
  async find(host: string, signal?: AbortSignal): Promise<Ec2Instance | undefined> {
    if (instanceIdPattern.test(host)) return this.ec2.instanceById(host, signal);
    const found = await this.ec2.instances([{ Name: "private-dns-name", Values: [host] }], signal);
    return (
      found.find((i) => i.state === "running") ?? found.find((i) => i.state !== "terminated") ?? found[0]
    );
  }

  /** How a lookup of `host` works, for messages. */
  describeLookup(host: string): string {
    return instanceIdPattern.test(host) ? "instance ID" : "private DNS name";
  }

  /**
   * The least loaded eligible host of the zone with room for one more address: fewest secondary
   * addresses on its primary interface, ties as {@link leastLoaded} breaks them. Counts the choice
   * as planned.
   * @throws IpamError HOST_UNAVAILABLE naming the zone when it has no eligible host, or none with room.
   */
  async choose(zone: string, signal?: AbortSignal): Promise<string> {
    const instances = await this.eligible(zone, signal);
    const tagText = this.tagText;
    if (instances.length === 0) {
      throw new IpamError(
        "HOST_UNAVAILABLE",
        `no eligible host in availability zone "${zone}" of ${this.options.region}: no running EC2 instance${tagText} ` +
          `is there; start one, or check the failure domain name and the provisioner's hostTags`,
      );
    }
    const scored = await Promise.all(
      instances.map(async (i) => {
        const extra = (this.planned.get(i.id) ?? 0) + (this.changed.get(i.id) ?? 0);
        // No address is known yet: EC2 picks an IPv4 one (addRandomIP).
        const eni = primaryInterface(i);
        const addresses = eni ? slotsUsed(eni, 4) : 0;
        const limit = await this.ec2.addressesPerInterface(i.instanceType, 4, signal);
        return { instance: i, load: Math.max(0, addresses - 1 + extra), used: addresses + extra, limit };
      }),
    );
    const open = scored.filter((s) => s.used < s.limit);
    if (open.length === 0) {
      const full = scored.map((s) => `${s.instance.id} (${s.instance.instanceType}: ${s.used}/${s.limit})`);
      throw new IpamError(
        "HOST_UNAVAILABLE",
        `no host in availability zone "${zone}" has room for another IP: every eligible instance${tagText} ` +
          `carries as many IPv4 addresses on its primary interface as its type allows (${full.join(", ")}); ` +
          `add instances to the zone or use a larger instance type`,
      );
    }
    const best = leastLoaded(
      open,
      (s) => s.load,
      (s) => s.instance.id,
    );
    this.bump(this.planned, best.instance.id, 1);
    return best.instance.id;
  }

  /**
   * Whether `host` (instance ID or private DNS name) is among the zone's eligible instances, from
   * the same cached list `choose` uses: no EC2 call per question.
   */
  async serves(host: string, zone: string, signal?: AbortSignal): Promise<boolean> {
    const instances = await this.eligible(zone, signal);
    return instances.some((i) => i.id === host || i.privateDnsName === host);
  }

  /** Records an address placed on the instance (its planned placement, if any, is done). */
  placed(instanceId: string): void {
    this.bump(this.planned, instanceId, -1);
    this.bump(this.changed, instanceId, 1);
  }

  /** Records an address taken off the instance. */
  removed(instanceId: string): void {
    this.bump(this.changed, instanceId, -1);
  }

  private bump(counts: Map<string, number>, id: string, by: number): void {
    const n = (counts.get(id) ?? 0) + by;
    if (counts === this.planned && n <= 0) counts.delete(id);
    else counts.set(id, n);
  }

  /** Running instances of the zone carrying every host tag, reused for `ttlMs`. */
  eligible(zone: string, signal?: AbortSignal): Promise<Ec2Instance[]> {
    const now = Date.now();
    const cached = this.zones.get(zone);
    if (cached && now - cached.at < this.options.ttlMs) return cached.instances;
    const filters: Filter[] = [
      { Name: "availability-zone", Values: [zone] },
      { Name: "instance-state-name", Values: ["running"] },
      ...Object.entries(this.options.hostTags).map(([k, v]) => ({ Name: `tag:${k}`, Values: [v] })),
    ];
    const instances = this.ec2.instances(filters, signal).then((list) => {
      // The fresh list includes what this process placed before it was taken.
      for (const i of list) this.changed.delete(i.id);
      return list;
    });
    instances.catch(() => this.zones.delete(zone));
    this.zones.set(zone, { at: now, instances });
    return instances;
  }
}
