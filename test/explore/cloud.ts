/**
 * The cloud of a cloud world: moto's EC2 behind the fault proxy (whose eipPrivateIps rewrite puts
 * back what moto lacks, an Elastic IP's association with a secondary private IP), a VPC with a
 * subnet per domain and the instances of `cloudHosts`, and things of somebody else's planted beside
 * ours: a secondary address on an untagged instance, an Elastic IP associated with it, and one
 * associated with nothing. What people and failures do to the cloud (take an address off its
 * host, terminate an instance) is done here too.
 */
import {
  AllocateAddressCommand,
  AssignPrivateIpAddressesCommand,
  AssociateAddressCommand,
  AttachNetworkInterfaceCommand,
  CreateNetworkInterfaceCommand,
  DescribeAddressesCommand,
  DescribeNetworkInterfacesCommand,
  TerminateInstancesCommand,
  UnassignPrivateIpAddressesCommand,
  type EC2Client,
} from "@aws-sdk/client-ec2";
import { eipPrivateIps, startFaultProxy, type FaultProxy } from "../support/ec2-fault-proxy";
import { createWorld, ec2Client, interfacesIn, startMoto, type MotoServer } from "../support/moto";
import { cloudHosts, zoneSubnets } from "./world";

export const region = "us-east-1";
/** The availability zone of each domain. */
export const zoneOf: Record<string, string> = { za: "us-east-1a", zb: "us-east-1b" };

/** moto and the proxy, started once for a session's cloud worlds. */
export interface CloudServers {
  moto: MotoServer;
  proxy: FaultProxy;
  stop(): Promise<void>;
}

/** Starts moto and the fault proxy in front of it. */
export async function startCloud(): Promise<CloudServers> {
  const moto = await startMoto();
  const proxy = await startFaultProxy(moto.endpoint);
  return {
    moto,
    proxy,
    async stop() {
      await proxy.stop();
      await moto.stop();
    },
  };
}

/** One sequence's VPC: its instances by model name, and what was planted of somebody else's. */
export interface Cloud {
  /** The provisioner's endpoint (the proxy). */
  endpoint: string;
  /** Instance ID of each model host name. */
  instanceOf: Record<string, string>;
  /** Model host name of each instance ID. */
  nameOf: Record<string, string>;
  subnetIds: string[];
  /** The subnet ID of each domain. */
  subnetOf: Record<string, string>;
  /**
   * The planted things, as they must stay (see {@link foreignState}): an address on an interface,
   * Elastic IPs, and the interfaces addresses were handed to since.
   */
  foreign: { address: string; eniId: string; eips: string[]; handed: { eniId: string; address: string }[] };
  ec2: EC2Client;
}

/** Forgets everything in moto and builds a fresh VPC with the planted things. */
export async function freshCloud(servers: CloudServers): Promise<Cloud> {
  await servers.moto.reset();
  servers.proxy.clear();
  servers.proxy.rewrite(eipPrivateIps);
  const ec2 = ec2Client(servers.proxy.endpoint, region);
  const tagsOf = (name: string): Record<string, string> =>
    name.endsWith("3")
      ? { role: "app" }
      : name.endsWith("2")
        ? { role: "egress" }
        : { role: "egress", team: "t" };
  const world = await createWorld(ec2, {
    region,
    subnets: Object.fromEntries(Object.entries(zoneSubnets).map(([d, cidr]) => [zoneOf[d]!, cidr])),
    instances: Object.fromEntries(
      Object.entries(cloudHosts).map(([d, names]) => [
        zoneOf[d]!,
        names.map((n, i) => ({
          tags: tagsOf(n),
          privateIp: `${zoneSubnets[d]!.split(".").slice(0, 3).join(".")}.${200 + i}`,
        })),
      ]),
    ),
  });
  const instanceOf: Record<string, string> = {};
  for (const [d, names] of Object.entries(cloudHosts))
    names.forEach((n, i) => (instanceOf[n] = world.instanceIds[zoneOf[d]!]![i]!));
  const subnetIds = Object.values(world.subnetIds);
  // Somebody else's: a secondary address on the untagged instance of za (a pod's, say), an Elastic
  // IP on it, and an Elastic IP associated with nothing.
  const a3 = (await interfacesIn(ec2, subnetIds)).find((e) => e.Attachment?.InstanceId === instanceOf.a3)!;
  const address = "10.0.1.60";
  await ec2.send(
    new AssignPrivateIpAddressesCommand({
      NetworkInterfaceId: a3.NetworkInterfaceId!,
      PrivateIpAddresses: [address],
    }),
  );
  const onIt = await ec2.send(new AllocateAddressCommand({ Domain: "vpc" }));
  await ec2.send(
    new AssociateAddressCommand({
      AllocationId: onIt.AllocationId!,
      NetworkInterfaceId: a3.NetworkInterfaceId!,
      PrivateIpAddress: address,
    }),
  );
  const idle = await ec2.send(new AllocateAddressCommand({ Domain: "vpc" }));
  return {
    endpoint: servers.proxy.endpoint,
    instanceOf,
    nameOf: Object.fromEntries(Object.entries(instanceOf).map(([n, id]) => [id, n])),
    subnetIds,
    subnetOf: Object.fromEntries(Object.keys(zoneOf).map((d) => [d, world.subnetIds[zoneOf[d]!]!])),
    foreign: {
      address,
      eniId: a3.NetworkInterfaceId!,
      eips: [onIt.AllocationId!, idle.AllocationId!],
      handed: [],
    },
    ec2,
  };
}

/** The planted things as the cloud has them now: must compare equal before and after every step. */
export async function foreignState(c: Cloud): Promise<string> {
  const eips =
    (await c.ec2.send(new DescribeAddressesCommand({ AllocationIds: c.foreign.eips }))).Addresses ?? [];
  const enis =
    (
      await c.ec2.send(
        new DescribeNetworkInterfacesCommand({
          NetworkInterfaceIds: [c.foreign.eniId, ...c.foreign.handed.map((h) => h.eniId)],
        }),
      )
    ).NetworkInterfaces ?? [];
  const eni = enis.find((e) => e.NetworkInterfaceId === c.foreign.eniId);
  return JSON.stringify({
    handed: c.foreign.handed.map((h) => ({
      ...h,
      on: enis
        .find((e) => e.NetworkInterfaceId === h.eniId)
        ?.PrivateIpAddresses?.some((a) => a.PrivateIpAddress === h.address),
    })),
    eips: eips
      .map((a) => ({
        id: a.AllocationId,
        publicIp: a.PublicIp,
        privateIp: a.PrivateIpAddress ?? null,
        eni: a.NetworkInterfaceId ?? null,
        tags: a.Tags ?? [],
      }))
      .sort((a, b) => String(a.id).localeCompare(String(b.id))),
    addresses: (eni?.PrivateIpAddresses ?? []).map((a) => a.PrivateIpAddress).sort(),
    tags: (eni?.TagSet ?? []).map((t) => `${t.Key}=${t.Value}`).sort(),
  });
}

/** What is left in the cloud that is not planted: secondary addresses, Elastic IPs, owner tags. */
export async function leftovers(c: Cloud, adopted: ReadonlySet<string>): Promise<string[]> {
  const out: string[] = [];
  for (const eni of await interfacesIn(c.ec2, c.subnetIds)) {
    for (const a of eni.PrivateIpAddresses ?? [])
      if (
        !a.Primary &&
        !(eni.NetworkInterfaceId === c.foreign.eniId && a.PrivateIpAddress === c.foreign.address) &&
        !c.foreign.handed.some((h) => h.eniId === eni.NetworkInterfaceId && h.address === a.PrivateIpAddress)
      )
        out.push(`${a.PrivateIpAddress} on ${eni.NetworkInterfaceId}`);
    for (const t of eni.TagSet ?? [])
      if (t.Key?.startsWith("egress-ipam")) out.push(`tag ${t.Key} on ${eni.NetworkInterfaceId}`);
  }
  const eips = (await c.ec2.send(new DescribeAddressesCommand({}))).Addresses ?? [];
  for (const e of eips) {
    if (c.foreign.eips.includes(e.AllocationId!)) continue;
    // An adopted Elastic IP is only disassociated, never released: it may stay, associated with nothing.
    if (adopted.has(e.AllocationId!) && !e.AssociationId) continue;
    out.push(
      `Elastic IP ${e.AllocationId} (${e.PublicIp})${e.PrivateIpAddress ? ` on ${e.PrivateIpAddress}` : ""}`,
    );
  }
  return out;
}

/** A person takes `ip` off whichever interface carries it. */
export async function unassign(c: Cloud, ip: string): Promise<void> {
  const eni = (await interfacesIn(c.ec2, c.subnetIds)).find((e) =>
    e.PrivateIpAddresses?.some((a) => a.PrivateIpAddress === ip && !a.Primary),
  );
  if (eni)
    await c.ec2.send(
      new UnassignPrivateIpAddressesCommand({
        NetworkInterfaceId: eni.NetworkInterfaceId!,
        PrivateIpAddresses: [ip],
      }),
    );
}

/**
 * The platform hands `ip` to somebody else on `host`: taken off whichever interface has it and put
 * on a second interface of the host (a pod's, as the VPC CNI does on eth1), which is planted.
 */
export async function handOver(c: Cloud, ip: string, host: string, subnet: string): Promise<void> {
  await unassign(c, ip);
  const instance = c.instanceOf[host]!;
  let eth1 = (await interfacesIn(c.ec2, c.subnetIds)).find(
    (e) => e.Attachment?.InstanceId === instance && e.Attachment.DeviceIndex === 1,
  )?.NetworkInterfaceId;
  if (!eth1) {
    const made = await c.ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: subnet }));
    eth1 = made.NetworkInterface!.NetworkInterfaceId!;
    await c.ec2.send(
      new AttachNetworkInterfaceCommand({ NetworkInterfaceId: eth1, InstanceId: instance, DeviceIndex: 1 }),
    );
  }
  await c.ec2.send(
    new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eth1, PrivateIpAddresses: [ip] }),
  );
  c.foreign.handed.push({ eniId: eth1, address: ip });
}

/** A host fails for good: its instance is terminated. */
export async function terminate(c: Cloud, host: string): Promise<void> {
  await c.ec2.send(new TerminateInstancesCommand({ InstanceIds: [c.instanceOf[host]!] }));
}

export { ec2Client };
