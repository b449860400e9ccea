// A planned address that somebody else took before it was placed: the EgressIp's allocation holds
// it (so the pool refuses to exclude it, and --replace plans it again), and every up fails on it.
// The error names a way out, and following it as written leads to a successful up. Real engine, moto.
import { CreateNetworkInterfaceCommand, CreateTagsCommand, type EC2Client } from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";
import {
  createWorld,
  ec2Client,
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

describe("an address taken between planning and placement", () => {
  const h = Harness.create("aws-taken", { env: motoCredentials });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  let moto: MotoServer;
  let ec2: EC2Client;
  let world: World;
  const program = (ips?: string[]) => async () => {
    const provisioner = { kind: "aws" as const, region, endpoint: moto.endpoint, hostTags: egress };
    const pool = new IpPool("egress", { ranges: [{ subnet }], cloudReserved: "aws" });
    const e = new EgressIp("team", {
      pool: { [zone]: pool },
      namespace: "team",
      failureDomains: [zone],
      provisioner,
      ips,
    });
    return { ip: e.ips.apply((l) => l[0]), host: e.hosts.apply((l) => l[0]) };
  };

  beforeAll(async () => {
    moto = await startMoto();
    ec2 = ec2Client(moto.endpoint, region);
    // Not tagged yet: the first up allocates the address and cannot place it.
    world = await createWorld(ec2, { region, subnets: { [zone]: subnet }, instances: { [zone]: [{}] } });
    await h.program(program());
  });
  afterAll(async () => {
    h.dispose();
    await moto?.stop();
  });

  it("names a way out that, followed as written, leads to a successful up", async () => {
    const [egressHost] = world.instanceIds[zone]!;
    await expect(h.up()).rejects.toThrow(/no eligible host in availability zone/);
    const held = (await h.resources()).find((r) => r.urn.endsWith(`IpAllocation::team-${zone}`));
    const ip = held!.outputs!.ip as string;
    expect(ip).toMatch(/^10\.0\.1\.\d+$/);
    // Somebody else takes the held address (an interface of its own: a load balancer's, a Lambda's);
    // the egress instance becomes eligible.
    await ec2.send(
      new CreateNetworkInterfaceCommand({ SubnetId: world.subnetIds[zone], PrivateIpAddress: ip }),
    );
    await ec2.send(
      new CreateTagsCommand({ Resources: [egressHost!], Tags: [{ Key: "role", Value: "egress" }] }),
    );

    const failure = await h.up().then(
      () => "",
      (e: unknown) => String(e),
    );
    expect(failure).toContain(`${ip} is already used by eni-`);
    const advice = /give the EgressIp ips: \["([0-9.]+)"\]/.exec(failure);
    expect(advice, failure).not.toBeNull();
    const spare = advice![1]!;

    await h.program(program([spare]));
    const up = await h.up();
    expect(up.outputs.ip!.value).toBe(spare);
    expect(up.outputs.host!.value).toBe(egressHost);
    expect((await secondaryIps(ec2, [world.subnetIds[zone]!]))[egressHost!]).toEqual([spare]);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });
});
