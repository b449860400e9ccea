import { IpamError } from "../../core/ipam-error";
import { addressFamily, type AddressFamily } from "../../allocator";
import { familyName } from "../../allocator/address";
import { parsePrefix } from "../../allocator/prefix";
import { Ec2, subnetBlockOf, type Ec2Instance, type Eni, type Subnet } from "./ec2";
import { hostLabel, HostInventory, primaryInterface } from "./hosts";
import { HostPlan } from "./host-plan";
import { takenAddress } from "../taken-address";
import { defaultRetryPolicy, ec2ErrorCode, type RetryPolicy } from "./ec2-retry";
import { ec2Failure } from "./ec2-failure";
import type { AwsProvisionerConfig } from "../config/aws-provisioner-config";

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

/**
 * What every view of one `aws` provisioner shares (see `AwsProvisioner.forOwner`): its EC2 client,
 * its host inventory and plan (one load count), the subnets it has read, and the EC2 steps that
 * record no owner: finding a host, the subnet block of an address, putting an address on an
 * interface and taking it off, and what an assignment failure means.
 */
export class AwsPlatform {
  private readonly subnets = new Map<string, Promise<Subnet>>();

  /** The platform of `config`: its EC2 client, host inventory and plan. */
  static of(config: AwsProvisionerConfig, options: AwsProvisionerOptions = {}): AwsPlatform {
    const region = config.region;
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
    const platform: AwsPlatform = new AwsPlatform(
      config,
      region,
      ec2,
      hosts,
      new HostPlan({
        eligible: (zone, signal) => hosts.eligible(zone, signal),
        subnetCidr: async (id, signal) => (await platform.subnetOf(id, signal)).cidrs,
        ipsPerInterface: (type, signal, family = 4) => ec2.addressesPerInterface(type, family, signal),
        interfaceTags: (ids, signal) => ec2.interfaceTags(ids, signal),
        tagText: hosts.tagText,
        region,
      }),
    );
    return platform;
  }

  private constructor(
    readonly config: AwsProvisionerConfig,
    readonly region: string,
    readonly ec2: Ec2,
    readonly hosts: HostInventory,
    readonly plan: HostPlan,
  ) {}

  /** The subnet `id`, read once. @throws IpamError NOT_FOUND when it does not exist. */
  subnetOf(id: string, signal?: AbortSignal): Promise<Subnet> {
    const { ec2, region, subnets } = this;
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
  }

  async mustFind(host: string, signal?: AbortSignal): Promise<Ec2Instance> {
    const { hosts, region } = this;
    const instance = await hosts.find(host, signal);
    if (!instance) {
      throw new IpamError(
        "NOT_FOUND",
        `no EC2 instance "${host}" in ${region} (looked up by ${hosts.describeLookup(host)}); ` +
          `give the instance ID or private DNS name of a running instance`,
      );
    }
    return instance;
  }

  /** A running host, its primary interface and that interface's subnet: where a new address goes. */
  async target(host: string, signal?: AbortSignal) {
    const instance = await this.mustFind(host, signal);
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
    return { instance, eni, subnet: await this.subnetOf(eni.subnetId, signal) };
  }

  /** The block of the subnet that contains `ip`. @throws IpamError HOST_UNAVAILABLE naming both when none does. */
  blockFor(ip: string, instance: Ec2Instance, eni: Eni, subnet: Subnet): string {
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
  }

  /** An assignment failure, with what to do where EC2 says why (a full interface, an address in use). */
  async assignFailure(
    doing: string,
    err: unknown,
    instance: Ec2Instance,
    eni: Eni,
    ip?: string,
    family: AddressFamily = ip ? addressFamily(ip) : 4,
  ) {
    const { ec2 } = this;
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
  }

  /** Every interface in a subnet that overlaps one of the CIDRs. */
  async interfacesWithin(cidrs: string[], signal?: AbortSignal): Promise<Eni[]> {
    const { ec2 } = this;
    for (const cidr of cidrs) parsePrefix(cidr);
    // By subnet, then client-side: the `addresses.private-ip-address` filter is not reliable for
    // secondary addresses everywhere (moto matches primaries only).
    const all = await ec2.subnets(undefined, signal);
    const overlapping = all
      .filter((s) => cidrs.some((c) => s.cidrs.some((block) => overlaps(c, block))))
      .map((s) => s.id);
    return overlapping.length === 0 ? [] : ec2.interfacesInSubnets(overlapping, signal);
  }

  /** Puts one given address on an interface: a secondary private IPv4 address, or an IPv6 address. */
  assignOne(eniId: string, ip: string, allowReassignment: boolean, signal?: AbortSignal) {
    return addressFamily(ip) === 6
      ? this.ec2.assignIpv6(eniId, [ip], signal)
      : this.ec2.assign(eniId, { ips: [ip], allowReassignment }, signal).then(() => undefined);
  }

  /** Takes one address off an interface. */
  unassignOne(eniId: string, ip: string, signal?: AbortSignal) {
    return addressFamily(ip) === 6
      ? this.ec2.unassignIpv6(eniId, [ip], signal)
      : this.ec2.unassign(eniId, [ip], signal);
  }
}
