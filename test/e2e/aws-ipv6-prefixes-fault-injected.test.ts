// Fault-injected (moto lacks Ipv6Prefixes): in IPv6 prefix mode the VPC CNI puts /80 prefixes on
// interfaces, and every address inside one is a pod's. A proxy in front of moto adds one to
// DescribeNetworkInterfaces and DescribeInstances answers. The provisioner reports the /80 as one
// block (2^48 addresses cannot be listed), so preview plans the first address after it, and a t3.micro
// (2 IPv6 addresses per interface) whose prefix and one address fill it is not planned. Real engine.
import {
  AssignIpv6AddressesCommand,
  AssociateSubnetCidrBlockCommand,
  AssociateVpcCidrBlockCommand,
  type EC2Client,
} from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatAddress } from "../../provider/allocator/address";
import { formatPrefix, parsePrefix } from "../../provider/allocator/prefix";
import { startFaultProxy, type FaultProxy } from "../support/ec2-fault-proxy";
import { Harness } from "../support/harness";
import {
  createWorld,
  ec2Client,
  interfacesIn,
  motoCredentials,
  startMoto,
  type MotoServer,
  type World,
} from "../support/moto";

type Pkg = typeof import("../../provider/index");

const region = "us-east-1";
const zone = "us-east-1a";
const egress = { role: "egress" };

describe("EC2 IPv6 prefixes (fault-injected: moto lacks Ipv6Prefixes) keep the plan off a delegated /80", () => {
  const h = Harness.create("aws-ipv6-prefixes", { env: motoCredentials });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  let moto: MotoServer;
  let proxy: FaultProxy;
  let ec2: EC2Client;
  let world: World;
  let subnet64: string;

  beforeAll(async () => {
    moto = await startMoto();
    proxy = await startFaultProxy(moto.endpoint);
    ec2 = ec2Client(moto.endpoint, region);
    world = await createWorld(ec2, {
      region,
      subnets: { [zone]: "10.0.1.0/24" },
      instances: { [zone]: [{ tags: egress }, { type: "t3.micro", tags: egress }] },
    });
    const vpc = await ec2.send(
      new AssociateVpcCidrBlockCommand({ VpcId: world.vpcId, AmazonProvidedIpv6CidrBlock: true }),
    );
    subnet64 = formatPrefix(6, parsePrefix(vpc.Ipv6CidrBlockAssociation!.Ipv6CidrBlock!).network, 64);
    await ec2.send(
      new AssociateSubnetCidrBlockCommand({ SubnetId: world.subnetIds[zone], Ipv6CidrBlock: subnet64 }),
    );
    const [big, small] = world.instanceIds[zone]!;
    const enis = await interfacesIn(ec2, [world.subnetIds[zone]!]);
    const eniOf = (id: string) => enis.find((n) => n.Attachment?.InstanceId === id)!.NetworkInterfaceId!;
    const base = parsePrefix(subnet64).network;
    // big: an address, so that small looks emptier; small: one address, and with its prefix full.
    const [one, two] = [
      formatAddress(6, base + 0x100000000000000n),
      formatAddress(6, base + 0x200000000000000n),
    ];
    await ec2.send(new AssignIpv6AddressesCommand({ NetworkInterfaceId: eniOf(big!), Ipv6Addresses: [one] }));
    await ec2.send(
      new AssignIpv6AddressesCommand({ NetworkInterfaceId: eniOf(small!), Ipv6Addresses: [two] }),
    );
    // The first /80 of the subnet (where the pool would plan) is big's pods'; another is small's.
    const prefixes = {
      [eniOf(big!)]: formatPrefix(6, base, 80),
      [eniOf(small!)]: formatPrefix(6, base + (7n << 48n), 80),
    };
    const withPrefixes = (xml: string) =>
      Object.entries(prefixes).reduce(
        (x, [eni, prefix]) =>
          x.replaceAll(
            `<networkInterfaceId>${eni}</networkInterfaceId>`,
            `<networkInterfaceId>${eni}</networkInterfaceId>` +
              `<ipv6PrefixSet><item><ipv6Prefix>${prefix}</ipv6Prefix></item></ipv6PrefixSet>`,
          ),
        xml,
      );
    proxy.rewrite({ action: "DescribeNetworkInterfaces", body: withPrefixes });
    proxy.rewrite({ action: "DescribeInstances", body: withPrefixes });
    await h.program(async () => {
      const provisioner = { kind: "aws" as const, region, endpoint: proxy.endpoint, hostTags: egress };
      const pool = new IpPool("egress", { ranges: [{ subnet: subnet64 }], cloudReserved: "aws" });
      const e = new EgressIp("team", {
        pool: { [zone]: pool },
        namespace: "team",
        failureDomains: [zone],
        provisioner,
      });
      return { ip: e.ips.apply((l) => l[0]), host: e.hosts.apply((l) => l[0]) };
    });
  });
  afterAll(async () => {
    h.dispose();
    await proxy?.stop();
    await moto?.stop();
  });

  it("plans the first address after the /80, on the instance whose prefix does not fill it, and up places it there", async () => {
    const [big] = world.instanceIds[zone]!;
    const after80 = formatAddress(6, parsePrefix(subnet64).network + (1n << 48n));
    const preview = await h.preview();
    expect(preview.planned(`EgressIpAssignment::team-${zone}`)).toMatchObject({ ip: after80, host: big });
    const up = await h.up();
    expect(up.outputs.ip!.value).toBe(after80);
    expect(up.outputs.host!.value).toBe(big);
    const eni = (await interfacesIn(ec2, [world.subnetIds[zone]!])).find(
      (n) => n.Attachment?.InstanceId === big,
    )!;
    expect((eni.Ipv6Addresses ?? []).map((a) => a.Ipv6Address)).toContain(after80);
    await h.destroy();
  });
});
