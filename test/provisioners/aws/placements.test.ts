import {
  AssignPrivateIpAddressesCommand,
  DescribeInstancesCommand,
  type EC2Client,
} from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { awsProvisioner } from "../../../provider/provisioners/aws/aws-provisioner";
import {
  createWorld,
  ec2Client,
  interfacesIn,
  motoCredentials,
  startMoto,
  type MotoServer,
  type World,
} from "../../support/moto";

const region = "us-east-1";

describe("aws placements (what check compares with state), against moto", () => {
  let moto: MotoServer;
  let ec2: EC2Client;
  let world: World;
  const eniOf = async (id: string) =>
    (await interfacesIn(ec2, Object.values(world.subnetIds))).find((n) => n.Attachment?.InstanceId === id)!;

  beforeAll(async () => {
    Object.assign(process.env, motoCredentials);
    moto = await startMoto();
    ec2 = ec2Client(moto.endpoint, region);
    world = await createWorld(ec2, {
      region,
      subnets: { "us-east-1a": "10.0.1.0/24", "us-east-1b": "10.0.2.0/24" },
      instances: { "us-east-1a": [{ privateIp: "10.0.1.200" }], "us-east-1b": [{ privateIp: "10.0.2.200" }] },
    });
    const [a] = world.instanceIds["us-east-1a"]!;
    const [b] = world.instanceIds["us-east-1b"]!;
    for (const [id, ips] of [
      [a!, ["10.0.1.10", "10.0.1.11"]],
      [b!, ["10.0.2.10"]],
    ] as const) {
      const eni = await eniOf(id);
      await ec2.send(
        new AssignPrivateIpAddressesCommand({
          NetworkInterfaceId: eni.NetworkInterfaceId,
          PrivateIpAddresses: [...ips],
        }),
      );
    }
  }, 60_000);
  afterAll(async () => moto?.stop());

  it.each<[string, string[], string[]]>([
    ["the secondary IPs inside the CIDRs, never the primaries", ["10.0.1.0/24"], ["10.0.1.10", "10.0.1.11"]],
    ["a CIDR narrower than the subnet", ["10.0.1.11/32"], ["10.0.1.11"]],
    ["several subnets", ["10.0.1.0/24", "10.0.2.0/24"], ["10.0.1.10", "10.0.1.11", "10.0.2.10"]],
    ["nothing for a CIDR no subnet overlaps", ["192.168.0.0/24"], []],
  ])("%s", async (_name, cidrs, ips) => {
    const p = awsProvisioner({ kind: "aws", region, endpoint: moto.endpoint });
    const seen = await p.placements!(cidrs);
    expect(seen.map((s) => s.ip).sort()).toEqual(ips);
  });

  it("names the instance, its DNS name, and the unassign call that removes the address", async () => {
    const [a] = world.instanceIds["us-east-1a"]!;
    const eni = await eniOf(a!);
    const [instance] = (await ec2.send(new DescribeInstancesCommand({ InstanceIds: [a!] }))).Reservations![0]!
      .Instances!;
    const p = awsProvisioner({ kind: "aws", region, endpoint: moto.endpoint });
    const [first] = (await p.placements!(["10.0.1.10/32"]))!;
    expect(first).toEqual({
      ip: "10.0.1.10",
      host: a,
      aliases: [instance!.PrivateDnsName],
      removeCommand:
        `aws ec2 unassign-private-ip-addresses --region ${region} --endpoint-url ${moto.endpoint} ` +
        `--network-interface-id ${eni.NetworkInterfaceId} --private-ip-addresses 10.0.1.10`,
    });
    expect(instance!.PrivateDnsName).toMatch(/^ip-10-0-1-200\./);
  });
});
