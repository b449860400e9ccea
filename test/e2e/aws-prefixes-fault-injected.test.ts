// Fault-injected (moto has no Ipv4Prefixes): the VPC CNI's prefix delegation puts /28 prefixes on
// interfaces, and every address inside one is a pod's. A proxy in front of moto adds prefixes to
// DescribeNetworkInterfaces and DescribeInstances answers; preview must not plan an address inside
// one, and must count each prefix as a slot of its interface. Real engine.
import { AssignPrivateIpAddressesCommand, type EC2Client } from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFaultProxy, type FaultProxy } from "../support/ec2-fault-proxy";
import { Harness } from "../support/harness";
import {
  createWorld,
  ec2Client,
  interfacesIn,
  motoCredentials,
  secondaryIps,
  startMoto,
  type MotoServer,
  type World,
} from "../support/moto";

type Pkg = typeof import("../../provider/index");

const region = "us-east-1";
const zone = "us-east-1a";
const subnet = "10.0.1.0/24";
const egress = { role: "egress" };

describe("EC2 prefixes (fault-injected: moto has none) count as used addresses and as slots", () => {
  const h = Harness.create("aws-prefixes", { env: motoCredentials });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  let moto: MotoServer;
  let proxy: FaultProxy;
  let ec2: EC2Client;
  let world: World;

  beforeAll(async () => {
    moto = await startMoto();
    proxy = await startFaultProxy(moto.endpoint);
    ec2 = ec2Client(moto.endpoint, region);
    // big: m5.large (10 addresses per interface); small: t3.micro (2), whose primary address and
    // one prefix fill it.
    world = await createWorld(ec2, {
      region,
      subnets: { [zone]: subnet },
      instances: { [zone]: [{ tags: egress }, { type: "t3.micro", tags: egress }] },
    });
    const [big, small] = world.instanceIds[zone]!;
    const enis = await interfacesIn(ec2, [world.subnetIds[zone]!]);
    const eniOf = (id: string) => enis.find((n) => n.Attachment?.InstanceId === id)!.NetworkInterfaceId!;
    // A secondary address on big, so that small (no secondary address) looks emptier.
    await ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: eniOf(big!),
        PrivateIpAddresses: ["10.0.1.100"],
      }),
    );
    const prefixes = { [eniOf(big!)]: "10.0.1.16/28", [eniOf(small!)]: "10.0.1.48/28" };
    const withPrefixes = (xml: string) =>
      Object.entries(prefixes).reduce(
        (x, [eni, prefix]) =>
          x.replaceAll(
            `<networkInterfaceId>${eni}</networkInterfaceId>`,
            `<networkInterfaceId>${eni}</networkInterfaceId>` +
              `<ipv4PrefixSet><item><ipv4Prefix>${prefix}</ipv4Prefix></item></ipv4PrefixSet>`,
          ),
        xml,
      );
    proxy.rewrite({ action: "DescribeNetworkInterfaces", body: withPrefixes });
    proxy.rewrite({ action: "DescribeInstances", body: withPrefixes });
    await h.program(async () => {
      const provisioner = { kind: "aws" as const, region, endpoint: proxy.endpoint, hostTags: egress };
      const pool = new IpPool("egress", {
        ranges: [{ subnet, rangeStart: "10.0.1.16" }],
        cloudReserved: "aws",
      });
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

  it("plans an address outside every prefix, on the instance whose prefix does not fill it", async () => {
    const [big] = world.instanceIds[zone]!;
    const preview = await h.preview();
    // 10.0.1.16-31 are big's pods, 10.0.1.48-63 small's: the first free address is 10.0.1.32.
    expect(preview.planned(`EgressIpAssignment::team-${zone}`)).toMatchObject({ ip: "10.0.1.32", host: big });
    const up = await h.up();
    expect(up.outputs.ip!.value).toBe("10.0.1.32");
    expect(up.outputs.host!.value).toBe(big);
    expect((await secondaryIps(ec2, [world.subnetIds[zone]!]))[big!]).toEqual(["10.0.1.100", "10.0.1.32"]);
  });
});
