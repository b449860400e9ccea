// EC2 takes at most 50 tags on a network interface, and the aws provisioner puts one there per
// egress address (its owner record, egress-ipam/<address>). The plan counts them: an address that
// would be an interface's 51st tag goes to another instance, or is refused at preview naming the
// instance, its interface and the count, instead of failing at CreateTags during up. Real engine, moto.
import { CreateTagsCommand, RunInstancesCommand, type EC2Client } from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
const teams = ["a", "b", "c", "d"];

describe("the EC2 limit of 50 tags per interface", () => {
  const h = Harness.create("aws-tag-limit", { env: motoCredentials });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  let moto: MotoServer;
  let ec2: EC2Client;
  let world: World;
  let eni = "";
  /** How many tags each interface of the subnet carries. */
  const tagCounts = async () =>
    Object.fromEntries(
      (await interfacesIn(ec2, [world.subnetIds[zone]!])).map((n) => [
        n.NetworkInterfaceId!,
        (n.TagSet ?? []).length,
      ]),
    );

  beforeAll(async () => {
    moto = await startMoto();
    ec2 = ec2Client(moto.endpoint, region);
    world = await createWorld(ec2, {
      region,
      subnets: { [zone]: subnet },
      instances: { [zone]: [{ tags: egress, privateIp: "10.0.1.200" }] },
    });
    eni = (await interfacesIn(ec2, [world.subnetIds[zone]!]))[0]!.NetworkInterfaceId!;
    // 47 tags of the owner's: room for three egress addresses' records, not four.
    const Tags = Array.from({ length: 47 }, (_, i) => ({ Key: `cost-center-${i}`, Value: "x" }));
    await ec2.send(new CreateTagsCommand({ Resources: [eni], Tags }));
    await h.program(async () => {
      const provisioner = { kind: "aws" as const, region, endpoint: moto.endpoint, hostTags: egress };
      const pool = new IpPool("egress", { ranges: [{ subnet }], cloudReserved: "aws" });
      for (const team of teams)
        new EgressIp(`team-${team}`, { pool, namespace: team, failureDomains: [zone], provisioner });
    });
  });
  afterAll(async () => {
    h.dispose();
    await moto?.stop();
  });

  it("preview refuses the address that would be the interface's 51st tag, naming the instance, its interface and the count", async () => {
    const [instance] = world.instanceIds[zone]!;
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toContain("[HOST_UNAVAILABLE] no host in availability zone");
    expect(err).toContain(`${instance} (`);
    expect(err).toContain(
      `its interface ${eni} has 50/50 tags (EC2's limit; 3 of them egress-ipam/<address> records, one per egress address); ` +
        `remove tags ${eni} does not need, or add a running instance tagged role=egress`,
    );
  });

  it("up refuses it at check too: no CreateTags fails, and the interface never carries more than 50 tags", async () => {
    const err = String(await h.up().catch((e: Error) => e));
    expect(err).toContain(`its interface ${eni} has 50/50 tags`);
    expect(err).not.toContain("TagLimitExceeded");
    expect((await tagCounts())[eni]).toBeLessThanOrEqual(50);
  });

  it("with another instance in the zone, the address goes there and up succeeds", async () => {
    await ec2.send(
      new RunInstancesCommand({
        ImageId: "ami-12c6146b",
        InstanceType: "m5.large",
        MinCount: 1,
        MaxCount: 1,
        SubnetId: world.subnetIds[zone],
        PrivateIpAddress: "10.0.1.201",
        TagSpecifications: [{ ResourceType: "instance", Tags: [{ Key: "role", Value: "egress" }] }],
      }),
    );
    await h.up();
    const placed = Object.values(await secondaryIps(ec2, [world.subnetIds[zone]!])).flat();
    expect(placed.sort()).toEqual(["10.0.1.4", "10.0.1.5", "10.0.1.6", "10.0.1.7"]);
    expect(Math.max(...Object.values(await tagCounts()))).toBeLessThanOrEqual(50);
  });
});
