import { IpamError } from "../../core/ipam-error";
import { canonicalAddress, type AddressFamily } from "../../allocator";
import { prefixContains } from "../../allocator/prefix";
import type {
  _InstanceType,
  EC2Client,
  Filter,
  Instance,
  InstanceNetworkInterface,
  NetworkInterface,
} from "@aws-sdk/client-ec2";
import { ec2ErrorCode, withRetry, type RetryPolicy } from "./ec2-retry";

// Loaded when the first provisioner is built: the SDK takes most of a second to load, and stacks
// that use another provisioner never need it.
const sdk = () => require("@aws-sdk/client-ec2") as typeof import("@aws-sdk/client-ec2");

/**
 * An address of an interface: a private IPv4 address (`primary`: the interface's own) or an IPv6
 * address (`primary`: EC2's primary IPv6, `IsPrimaryIpv6`), canonical.
 */
export interface EniAddress {
  ip: string;
  primary: boolean;
}

/** The parts of an elastic network interface the provisioner works with. */
export interface Eni {
  id: string;
  subnetId: string;
  /** Position on its instance; 0 is the primary interface. Undefined when detached. */
  deviceIndex?: number;
  /** The instance it is attached to, if any. */
  instanceId?: string;
  description?: string;
  /** Its private IPv4 addresses, then its IPv6 addresses. */
  addresses: EniAddress[];
  /**
   * Prefixes delegated to the interface (`Ipv4Prefixes`, `Ipv6Prefixes`: the VPC CNI's prefix
   * delegation puts IPv4 /28s or IPv6 /80s there for pods). Every address inside one is in use,
   * and each takes one of the interface's address slots of its family.
   */
  prefixes?: string[];
  /**
   * The interface's tags; read by {@link Ec2.interfacesInSubnets} and {@link Ec2.interfacesOf} only
   * (DescribeInstances omits them).
   */
  tags?: Record<string, string>;
}

/** The parts of an EC2 instance the provisioner works with. */
export interface Ec2Instance {
  id: string;
  /** `pending`, `running`, `stopping`, `stopped`, `shutting-down` or `terminated`. */
  state: string;
  availabilityZone: string;
  instanceType: string;
  privateDnsName: string;
  interfaces: Eni[];
}

/** A subnet's ID, CIDR blocks and availability zone. */
export interface Subnet {
  id: string;
  /**
   * Its IPv4 CIDR block (absent for an IPv6-only subnet), then its associated IPv6 CIDR blocks:
   * EC2 assigns an interface only addresses of its own subnet's blocks.
   */
  cidrs: string[];
  availabilityZone: string;
}

/** The block of `subnet` that contains `ip`, if any. */
export function subnetBlockOf(subnet: Subnet, ip: string): string | undefined {
  return subnet.cidrs.find((c) => prefixContains(c, ip));
}

/** An Elastic IP allocation and where it is associated, if anywhere. */
export interface ElasticIp {
  allocationId: string;
  publicIp: string;
  associationId?: string;
  networkInterfaceId?: string;
  /** The private IPv4 address of `networkInterfaceId` it is associated with. */
  privateIp?: string;
  tags: Record<string, string>;
}

/** Where the EC2 API is and how calls to it are retried. Credentials come from the default chain. */
export interface Ec2Options {
  region: string;
  endpoint?: string;
  retry: RetryPolicy;
}

/** What DescribeInstances and DescribeNetworkInterfaces both say about an interface's addresses. */
interface AddressLists {
  PrivateIpAddresses?: { PrivateIpAddress?: string; Primary?: boolean }[];
  Ipv6Addresses?: { Ipv6Address?: string; IsPrimaryIpv6?: boolean }[];
  Ipv4Prefixes?: { Ipv4Prefix?: string }[];
  Ipv6Prefixes?: { Ipv6Prefix?: string }[];
}

const prefixesOf = (n: AddressLists): string[] => [
  ...(n.Ipv4Prefixes ?? []).flatMap((p) => (p.Ipv4Prefix ? [p.Ipv4Prefix] : [])),
  ...(n.Ipv6Prefixes ?? []).flatMap((p) => (p.Ipv6Prefix ? [p.Ipv6Prefix] : [])),
];

// IPv6 text is canonicalized: EC2 compares it as given (an emulator keeps whatever spelling it got).
const addressesOf = (n: AddressLists): EniAddress[] => [
  ...(n.PrivateIpAddresses ?? []).flatMap((a) =>
    a.PrivateIpAddress ? [{ ip: a.PrivateIpAddress, primary: Boolean(a.Primary) }] : [],
  ),
  ...(n.Ipv6Addresses ?? []).flatMap((a) =>
    a.Ipv6Address ? [{ ip: canonicalAddress(a.Ipv6Address), primary: Boolean(a.IsPrimaryIpv6) }] : [],
  ),
];

/** Association states of a subnet's IPv6 block that mean it is not (or no longer) the subnet's. */
const goneStates = new Set(["disassociating", "disassociated", "failing", "failed"]);

function instanceEni(n: InstanceNetworkInterface): Eni {
  return {
    id: n.NetworkInterfaceId ?? "",
    subnetId: n.SubnetId ?? "",
    deviceIndex: n.Attachment?.DeviceIndex,
    description: n.Description,
    addresses: addressesOf(n),
    prefixes: prefixesOf(n),
  };
}

function standaloneEni(n: NetworkInterface): Eni {
  return {
    id: n.NetworkInterfaceId ?? "",
    subnetId: n.SubnetId ?? "",
    deviceIndex: n.Attachment?.DeviceIndex,
    instanceId: n.Attachment?.InstanceId,
    description: n.Description,
    addresses: addressesOf(n),
    prefixes: prefixesOf(n),
    tags: Object.fromEntries((n.TagSet ?? []).flatMap((t) => (t.Key ? [[t.Key, t.Value ?? ""]] : []))),
  };
}

function toInstance(i: Instance): Ec2Instance {
  const id = i.InstanceId ?? "";
  return {
    id,
    state: i.State?.Name ?? "unknown",
    availabilityZone: i.Placement?.AvailabilityZone ?? "",
    instanceType: i.InstanceType ?? "",
    privateDnsName: i.PrivateDnsName ?? "",
    interfaces: (i.NetworkInterfaces ?? []).map((n) => ({ ...instanceEni(n), instanceId: id })),
  };
}

/** Splits a long filter value list: EC2 accepts at most 200 values per filter. */
function chunks<T>(items: T[], size = 200): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The EC2 calls of the AWS provisioner, with pagination, retries (see {@link withRetry}) and
 * abort signals, returning small plain records. One client per provisioner; the SDK's own retries
 * are off so that backoff happens in one place.
 */
export class Ec2 {
  private readonly client: EC2Client;
  private readonly retry: RetryPolicy;
  private readonly networkInfoByType = new Map<string, Promise<Record<AddressFamily, number>>>();

  constructor(options: Ec2Options) {
    this.client = new (sdk().EC2Client)({
      region: options.region,
      endpoint: options.endpoint,
      maxAttempts: 1,
    });
    this.retry = options.retry;
  }

  private call<T>(send: (signal?: AbortSignal) => Promise<T>, signal?: AbortSignal, awaitVisible = false) {
    return withRetry(send, { policy: this.retry, signal, awaitVisible });
  }

  /**
   * Instances by ID. An unknown ID is retried within the consistency window (it may have just been
   * created), then reported as absent rather than as an error.
   */
  async instanceById(id: string, signal?: AbortSignal): Promise<Ec2Instance | undefined> {
    try {
      const out = await this.call(
        (abortSignal) =>
          this.client.send(new (sdk().DescribeInstancesCommand)({ InstanceIds: [id] }), { abortSignal }),
        signal,
        true,
      );
      const found = (out.Reservations ?? []).flatMap((r) => r.Instances ?? []).map(toInstance);
      return found.find((i) => i.id === id);
    } catch (err) {
      const code = ec2ErrorCode(err);
      if (code === "InvalidInstanceID.NotFound" || code === "InvalidInstanceID.Malformed") return undefined;
      throw err;
    }
  }

  /** Every page of a paginated call: `page` asks for the page after `NextToken`. */
  private async allPages<Out extends { NextToken?: string }>(
    page: (NextToken: string | undefined, abortSignal?: AbortSignal) => Promise<Out>,
    signal: AbortSignal | undefined,
    awaitVisible = false,
  ): Promise<Out[]> {
    const pages: Out[] = [];
    let NextToken: string | undefined;
    do {
      const out = await this.call((abortSignal) => page(NextToken, abortSignal), signal, awaitVisible);
      pages.push(out);
      NextToken = out.NextToken;
    } while (NextToken);
    return pages;
  }

  /** Every instance matching the filters, all pages. */
  async instances(filters: Filter[], signal?: AbortSignal): Promise<Ec2Instance[]> {
    const pages = await this.allPages(
      (NextToken, abortSignal) =>
        this.client.send(new (sdk().DescribeInstancesCommand)({ Filters: filters, NextToken }), {
          abortSignal,
        }),
      signal,
    );
    return pages.flatMap((out) =>
      (out.Reservations ?? []).flatMap((r) => (r.Instances ?? []).map(toInstance)),
    );
  }

  /** Every network interface in the given subnets, all pages. */
  async interfacesInSubnets(subnetIds: string[], signal?: AbortSignal): Promise<Eni[]> {
    const found: Eni[] = [];
    for (const ids of chunks([...new Set(subnetIds)])) {
      const Filters = [{ Name: "subnet-id", Values: ids }];
      const pages = await this.allPages(
        (NextToken, abortSignal) =>
          this.client.send(new (sdk().DescribeNetworkInterfacesCommand)({ Filters, NextToken }), {
            abortSignal,
          }),
        signal,
      );
      found.push(...pages.flatMap((out) => (out.NetworkInterfaces ?? []).map(standaloneEni)));
    }
    return found;
  }

  /**
   * The tag keys of each of these interfaces, as they are now (DescribeInstances leaves them out); an
   * interface that is gone is absent from the map.
   */
  async interfaceTags(eniIds: string[], signal?: AbortSignal): Promise<Map<string, string[]>> {
    const found = new Map<string, string[]>();
    for (const ids of chunks([...new Set(eniIds)])) {
      const Filters = [{ Name: "network-interface-id", Values: ids }];
      const pages = await this.allPages(
        (NextToken, abortSignal) =>
          this.client.send(new (sdk().DescribeNetworkInterfacesCommand)({ Filters, NextToken }), {
            abortSignal,
          }),
        signal,
      );
      for (const eni of pages.flatMap((out) => (out.NetworkInterfaces ?? []).map(standaloneEni)))
        found.set(eni.id, Object.keys(eni.tags ?? {}));
    }
    return found;
  }

  /** The network interfaces attached to an instance, with their addresses and tags as they are now. */
  async interfacesOf(instanceId: string, signal?: AbortSignal): Promise<Eni[]> {
    const Filters = [{ Name: "attachment.instance-id", Values: [instanceId] }];
    const pages = await this.allPages(
      (NextToken, abortSignal) =>
        this.client.send(new (sdk().DescribeNetworkInterfacesCommand)({ Filters, NextToken }), {
          abortSignal,
        }),
      signal,
    );
    return pages.flatMap((out) => (out.NetworkInterfaces ?? []).map(standaloneEni));
  }

  /** Subnets by ID (all of the region's when `ids` is undefined), all pages. */
  async subnets(ids: string[] | undefined, signal?: AbortSignal): Promise<Subnet[]> {
    const pages = await this.allPages(
      (NextToken, abortSignal) =>
        this.client.send(new (sdk().DescribeSubnetsCommand)({ SubnetIds: ids, NextToken }), { abortSignal }),
      signal,
      ids !== undefined,
    );
    return pages.flatMap((out) =>
      (out.Subnets ?? []).flatMap((s) => {
        const ipv6 = (s.Ipv6CidrBlockAssociationSet ?? []).flatMap((a) =>
          a.Ipv6CidrBlock && !goneStates.has(String(a.Ipv6CidrBlockState?.State)) ? [a.Ipv6CidrBlock] : [],
        );
        const cidrs = [...(s.CidrBlock ? [s.CidrBlock] : []), ...ipv6];
        return s.SubnetId && cidrs.length > 0
          ? [{ id: s.SubnetId, cidrs, availabilityZone: s.AvailabilityZone ?? "" }]
          : [];
      }),
    );
  }

  /**
   * Addresses of `family` one interface of this instance type can carry (`Ipv4AddressesPerInterface`,
   * the primary included; `Ipv6AddressesPerInterface`, 0 for a type without IPv6), cached per type.
   */
  async addressesPerInterface(
    instanceType: string,
    family: AddressFamily,
    signal?: AbortSignal,
  ): Promise<number> {
    let info = this.networkInfoByType.get(instanceType);
    if (!info) {
      info = this.call(
        (abortSignal) =>
          this.client.send(
            new (sdk().DescribeInstanceTypesCommand)({ InstanceTypes: [instanceType as _InstanceType] }),
            { abortSignal },
          ),
        signal,
      ).then((out) => {
        const network = out.InstanceTypes?.[0]?.NetworkInfo;
        if (!network?.Ipv4AddressesPerInterface)
          throw new IpamError(
            "PROVISIONER_FAILED",
            `EC2 does not report how many IPv4 addresses a ${instanceType} interface takes`,
          );
        return {
          4: network.Ipv4AddressesPerInterface,
          6: network.Ipv6Supported === false ? 0 : (network.Ipv6AddressesPerInterface ?? 0),
        };
      });
      info.catch(() => this.networkInfoByType.delete(instanceType));
      this.networkInfoByType.set(instanceType, info);
    }
    return (await info)[family];
  }

  /**
   * Assigns secondary addresses: the given ones, or `count` that EC2 picks. Returns the addresses
   * the answer lists (EC2 lists the new ones; some emulators list all of the interface's).
   */
  async assign(
    eniId: string,
    what: { ips: string[]; allowReassignment: boolean } | { count: number },
    signal?: AbortSignal,
  ): Promise<string[]> {
    const input =
      "ips" in what
        ? {
            NetworkInterfaceId: eniId,
            PrivateIpAddresses: what.ips,
            AllowReassignment: what.allowReassignment,
          }
        : { NetworkInterfaceId: eniId, SecondaryPrivateIpAddressCount: what.count };
    const out = await this.call(
      (abortSignal) => this.client.send(new (sdk().AssignPrivateIpAddressesCommand)(input), { abortSignal }),
      signal,
      true,
    );
    return (out.AssignedPrivateIpAddresses ?? []).flatMap((a) =>
      a.PrivateIpAddress ? [a.PrivateIpAddress] : [],
    );
  }

  /** Unassigns secondary addresses from an interface. */
  async unassign(eniId: string, ips: string[], signal?: AbortSignal): Promise<void> {
    await this.call(
      (abortSignal) =>
        this.client.send(
          new (sdk().UnassignPrivateIpAddressesCommand)({
            NetworkInterfaceId: eniId,
            PrivateIpAddresses: ips,
          }),
          {
            abortSignal,
          },
        ),
      signal,
    );
  }

  /**
   * Assigns the given IPv6 addresses to an interface. EC2 has no reassignment for IPv6: an address
   * another interface has is refused, so a move takes it off there first.
   */
  async assignIpv6(eniId: string, ips: string[], signal?: AbortSignal): Promise<void> {
    await this.call(
      (abortSignal) =>
        this.client.send(
          new (sdk().AssignIpv6AddressesCommand)({ NetworkInterfaceId: eniId, Ipv6Addresses: ips }),
          { abortSignal },
        ),
      signal,
      true,
    );
  }

  /** Unassigns IPv6 addresses from an interface. */
  async unassignIpv6(eniId: string, ips: string[], signal?: AbortSignal): Promise<void> {
    await this.call(
      (abortSignal) =>
        this.client.send(
          new (sdk().UnassignIpv6AddressesCommand)({ NetworkInterfaceId: eniId, Ipv6Addresses: ips }),
          { abortSignal },
        ),
      signal,
    );
  }

  /** Elastic IPs by allocation ID, or matching the filters (`tag:<key>`, `network-interface-id`), all of them. */
  async elasticIps(query: { allocationIds: string[] } | { filters: Filter[] }, signal?: AbortSignal) {
    const input =
      "allocationIds" in query ? { AllocationIds: query.allocationIds } : { Filters: query.filters };
    try {
      const out = await this.call(
        (abortSignal) => this.client.send(new (sdk().DescribeAddressesCommand)(input), { abortSignal }),
        signal,
      );
      return (out.Addresses ?? []).flatMap((a): ElasticIp[] =>
        a.AllocationId && a.PublicIp
          ? [
              {
                allocationId: a.AllocationId,
                publicIp: a.PublicIp,
                associationId: a.AssociationId || undefined,
                networkInterfaceId: a.NetworkInterfaceId || undefined,
                privateIp: a.PrivateIpAddress || undefined,
                tags: Object.fromEntries(
                  (a.Tags ?? []).flatMap((t) => (t.Key ? [[t.Key, t.Value ?? ""]] : [])),
                ),
              },
            ]
          : [],
      );
    } catch (err) {
      // An allocation ID nobody has: absent, not an error.
      if (ec2ErrorCode(err) === "InvalidAllocationID.NotFound") return [];
      throw err;
    }
  }

  /** Allocates an Elastic IP in the VPC domain, tagged as it is made (so no allocation is ever untagged). */
  async allocateElasticIp(tags: Record<string, string>, signal?: AbortSignal): Promise<ElasticIp> {
    const Tags = Object.entries(tags).map(([Key, Value]) => ({ Key, Value }));
    const out = await this.call(
      (abortSignal) =>
        this.client.send(
          new (sdk().AllocateAddressCommand)({
            Domain: "vpc",
            TagSpecifications: [{ ResourceType: "elastic-ip", Tags }],
          }),
          { abortSignal },
        ),
      signal,
    );
    return { allocationId: out.AllocationId ?? "", publicIp: out.PublicIp ?? "", tags };
  }

  /**
   * Associates an Elastic IP with a private IPv4 address of an interface, taking it from wherever
   * it is associated now (`AllowReassociation`).
   */
  async associateElasticIp(allocationId: string, eniId: string, privateIp: string, signal?: AbortSignal) {
    await this.call(
      (abortSignal) =>
        this.client.send(
          new (sdk().AssociateAddressCommand)({
            AllocationId: allocationId,
            NetworkInterfaceId: eniId,
            PrivateIpAddress: privateIp,
            AllowReassociation: true,
          }),
          { abortSignal },
        ),
      signal,
      true,
    );
  }

  /** Ends an association; one already ended is not an error. */
  async disassociateElasticIp(associationId: string, signal?: AbortSignal): Promise<void> {
    try {
      await this.call(
        (abortSignal) =>
          this.client.send(new (sdk().DisassociateAddressCommand)({ AssociationId: associationId }), {
            abortSignal,
          }),
        signal,
      );
    } catch (err) {
      if (ec2ErrorCode(err) !== "InvalidAssociationID.NotFound") throw err;
    }
  }

  /** Releases an Elastic IP allocation; one already released is not an error. */
  async releaseElasticIp(allocationId: string, signal?: AbortSignal): Promise<void> {
    try {
      await this.call(
        (abortSignal) =>
          this.client.send(new (sdk().ReleaseAddressCommand)({ AllocationId: allocationId }), {
            abortSignal,
          }),
        signal,
      );
    } catch (err) {
      if (ec2ErrorCode(err) !== "InvalidAllocationID.NotFound") throw err;
    }
  }

  /** Sets tags on a resource: an interface, an Elastic IP allocation (CreateTags overwrites a key's value). */
  async tag(resourceId: string, tags: Record<string, string>, signal?: AbortSignal): Promise<void> {
    const Tags = Object.entries(tags).map(([Key, Value]) => ({ Key, Value }));
    await this.call(
      (abortSignal) =>
        this.client.send(new (sdk().CreateTagsCommand)({ Resources: [resourceId], Tags }), { abortSignal }),
      signal,
      true,
    );
  }

  /** Removes tags (by key) from a resource; an absent key is not an error. */
  async untag(resourceId: string, keys: string[], signal?: AbortSignal): Promise<void> {
    const Tags = keys.map((Key) => ({ Key }));
    await this.call(
      (abortSignal) =>
        this.client.send(new (sdk().DeleteTagsCommand)({ Resources: [resourceId], Tags }), { abortSignal }),
      signal,
    );
  }
}
