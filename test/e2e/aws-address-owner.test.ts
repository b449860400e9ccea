// An address already on the chosen EC2 interface that this package did not put there (a VPC CNI
// warm IP, another tool's) is refused at create, with the real engine against moto; `adopt: true`
// takes it over (the interface's owner tag then names this assignment) and destroy takes it off.
import { AssignPrivateIpAddressesCommand, type EC2Client } from "@aws-sdk/client-ec2";
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
const ip = "10.0.1.50";

describe("an address somebody else put on the EC2 interface", () => {
  const h = Harness.create("aws-owner", { env: motoCredentials });
  let moto: MotoServer;
  let ec2: EC2Client;
  let world: World;
  const instance = () => world.instanceIds[zone]![0]!;
  const eni = async () =>
    (await interfacesIn(ec2, [world.subnetIds[zone]!])).find((n) => n.Attachment?.InstanceId === instance())!;
  const program = (adopt?: boolean) => async () => {
    const { EgressIpAssignment } = h.pkg<Pkg>("pulumi-egress-ipam");
    const a = new EgressIpAssignment("egress", {
      ip,
      provisioner: { kind: "aws", region, endpoint: moto.endpoint },
      failureDomain: zone,
      host: instance(),
      ...(adopt === undefined ? {} : { adopt }),
    });
    return { host: a.host };
  };

  beforeAll(async () => {
    moto = await startMoto();
    ec2 = ec2Client(moto.endpoint, region);
    world = await createWorld(ec2, {
      region,
      subnets: { [zone]: "10.0.1.0/24" },
      instances: { [zone]: [{}] },
    });
  });
  afterAll(async () => {
    h.dispose();
    await moto?.stop();
  });

  it("is refused naming the interface; adopt: true takes it over; destroy takes it and the tag off", async () => {
    await ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: (await eni()).NetworkInterfaceId,
        PrivateIpAddresses: [ip],
      }),
    );
    await h.program(program());
    await expect(h.up()).rejects.toThrow(
      /already a secondary IP of its interface eni-\w+, not put there by this package \(no egress-ipam\/10\.0\.1\.50 tag\)/,
    );
    expect((await secondaryIps(ec2, [world.subnetIds[zone]!]))[instance()]).toEqual([ip]);

    await h.program(program(true));
    await h.up();
    const tags = Object.fromEntries(((await eni()).TagSet ?? []).map((t) => [t.Key, t.Value]));
    expect(tags[`egress-ipam/${ip}`]).toMatch(/^sha256:[0-9a-f]{40}$/);

    await h.destroy();
    expect((await secondaryIps(ec2, [world.subnetIds[zone]!]))[instance()] ?? []).toEqual([]);
    expect(((await eni()).TagSet ?? []).map((t) => t.Key)).not.toContain(`egress-ipam/${ip}`);
  });
});
