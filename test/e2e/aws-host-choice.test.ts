// The host an EgressIp's address goes to on AWS is the one `preview` shows, whatever order the
// engine checks resources in (`--parallel 8`), and always one `up` accepts: an instance whose
// primary interface is in the subnet containing the address. Real engine, moto.
import {
  AssignPrivateIpAddressesCommand,
  CreateSubnetCommand,
  RunInstancesCommand,
  type EC2Client,
} from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";
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
// Previews compared with one `up` (issue 44 asks for 20): about 1-2 s each on 2 cores. Before the
// rule, 13 of 20 previews showed other hosts than `up` used. EGRESS_IPAM_HOST_CHOICE_PREVIEWS sets another count.
const previews = Number(process.env.EGRESS_IPAM_HOST_CHOICE_PREVIEWS ?? 20);

describe("AWS host choice: preview shows the hosts up uses", () => {
  const h = Harness.create("aws-host-choice", { env: motoCredentials });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  let moto: MotoServer;
  let ec2: EC2Client;
  let world: World;

  const program = (teams: string[]) => async () => {
    const provisioner = { kind: "aws" as const, region, endpoint: moto.endpoint, hostTags: egress };
    const pool = new IpPool("egress", { ranges: [{ subnet }], cloudReserved: "aws" });
    const out: Record<string, unknown> = {};
    for (const team of teams) {
      const e = new EgressIp(team, {
        pool: { [zone]: pool },
        namespace: team,
        failureDomains: [zone],
        provisioner,
      });
      out[team] = e.hosts.apply((l) => l[0]);
    }
    return out;
  };
  const assignment = (team: string) => `EgressIpAssignment::${team}-${zone}`;
  const previewHosts = async (teams: string[]) => {
    const preview = await h.preview({ parallel: 8 });
    return Object.fromEntries(teams.map((t) => [t, preview.planned(assignment(t))?.host]));
  };
  const assignForeign = async (instanceId: string, ip: string) => {
    const eni = (await interfacesIn(ec2, Object.values(world.subnetIds))).find(
      (n) => n.Attachment?.InstanceId === instanceId,
    )!;
    await ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: eni.NetworkInterfaceId,
        PrivateIpAddresses: [ip],
      }),
    );
  };

  beforeAll(async () => {
    moto = await startMoto();
    ec2 = ec2Client(moto.endpoint, region);
    world = await createWorld(ec2, {
      region,
      subnets: { [zone]: subnet },
      instances: { [zone]: [{ tags: egress }, { tags: egress }] },
    });
  });
  afterAll(async () => {
    h.dispose();
    await moto?.stop();
  });

  it(`shows at each of ${previews} previews (--parallel 8) the hosts up uses, for two EgressIps of one zone on two equal instances`, async () => {
    const teams = ["team-a", "team-b"];
    await h.program(program(teams));
    const seen: Record<string, unknown>[] = [];
    for (let i = 0; i < previews; i++) seen.push(await previewHosts(teams));
    const up = await h.up({ parallel: 8 });
    const placed = Object.fromEntries(teams.map((t) => [t, up.outputs[t]!.value]));
    for (const host of Object.values(placed)) expect(world.instanceIds[zone]).toContain(host);
    expect(seen.filter((s) => JSON.stringify(s) !== JSON.stringify(placed))).toEqual([]);
    const onEc2 = await secondaryIps(ec2, [world.subnetIds[zone]!]);
    expect(Object.keys(onEc2).sort()).toEqual([...new Set(Object.values(placed) as string[])].sort());
  });

  it("never shows an instance of the zone whose interface is in another subnet, even when it is the least loaded", async () => {
    // An emptier tagged instance of the same zone, in a subnet that does not contain the pool's addresses.
    const other = await ec2.send(
      new CreateSubnetCommand({ VpcId: world.vpcId, CidrBlock: "10.0.4.0/24", AvailabilityZone: zone }),
    );
    const run = await ec2.send(
      new RunInstancesCommand({
        ImageId: "ami-12c6146b",
        InstanceType: "m5.large",
        MinCount: 1,
        MaxCount: 1,
        SubnetId: other.Subnet!.SubnetId,
        TagSpecifications: [{ ResourceType: "instance", Tags: [{ Key: "role", Value: "egress" }] }],
      }),
    );
    const elsewhere = run.Instances![0]!.InstanceId!;
    for (const [n, id] of world.instanceIds[zone]!.entries()) await assignForeign(id, `10.0.1.${100 + n}`);
    const teams = ["team-a", "team-b", "team-c"];
    await h.program(program(teams));
    const shown = await previewHosts(teams);
    expect(world.instanceIds[zone]).toContain(shown["team-c"]);
    const up = await h.up({ parallel: 8 });
    expect(up.outputs["team-c"]!.value).toBe(shown["team-c"]);
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
    expect((await secondaryIps(ec2, [other.Subnet!.SubnetId!]))[elsewhere]).toBeUndefined();
  });
});
