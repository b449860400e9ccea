// IPv6 egress addresses on AWS, end to end with the real engine against moto: each zone's pool is
// its subnet's IPv6 /64, and an EgressIp puts one IPv6 address per zone on a host's primary
// interface. Preview shows it, refresh finds it removed and up puts it back, `check` finds it
// missing or misplaced, up moves it off a stopped or terminated host, destroy takes it off.
import {
  AssignIpv6AddressesCommand,
  AssociateSubnetCidrBlockCommand,
  AssociateVpcCidrBlockCommand,
  CreateTagsCommand,
  StopInstancesCommand,
  TerminateInstancesCommand,
  UnassignIpv6AddressesCommand,
  type EC2Client,
} from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatPrefix, parsePrefix } from "../../provider/allocator/prefix";
import { ownerTagKey } from "../../provider/provisioners/aws/aws-provisioner";
import { runCli } from "../support/cli";
import { changesOf, Harness } from "../support/harness";
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
const zones = { "1a": "us-east-1a", "1b": "us-east-1b" } as const;
const subnets = { "us-east-1a": "10.0.1.0/24", "us-east-1b": "10.0.2.0/24", "us-east-1c": "10.0.3.0/24" };
const egress = { role: "egress" };

describe("EgressIp with IPv6 pools and the aws provisioner, against moto", () => {
  const h = Harness.create("aws-ipv6-egress", { env: motoCredentials });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  let moto: MotoServer;
  let ec2: EC2Client;
  let world: World;
  /** Each zone's subnet IPv6 /64. */
  const v6: Record<string, string> = {};
  const previewHosts: Record<string, string> = {};

  /** The address `suffix` (hex) of a zone's /64. */
  const at = (zone: string, suffix: string) => `${v6[zone]!.split("::/")[0]}::${suffix}`;
  const allSubnets = () => Object.values(world.subnetIds);
  const eniOf = async (id: string) =>
    (await interfacesIn(ec2, allSubnets())).find((n) => n.Attachment?.InstanceId === id)!;
  /** IPv6 addresses by instance (instances with none left out), as moto lists them. */
  const placed = async () => {
    const out: Record<string, string[]> = {};
    for (const eni of await interfacesIn(ec2, allSubnets())) {
      const ips = (eni.Ipv6Addresses ?? []).map((a) => a.Ipv6Address!);
      if (ips.length > 0) out[eni.Attachment?.InstanceId ?? eni.NetworkInterfaceId!] = ips.sort();
    }
    return out;
  };
  const tagged = (zone: string) => world.instanceIds[zone]!.slice(0, 3);
  const outputs = async () => {
    const up = await h.up();
    return Object.fromEntries(Object.entries(up.outputs).map(([k, v]) => [k, v.value as string]));
  };
  const check = (...args: string[]) => runCli(["check", "--stack", h.fqStackName, ...args], h.env);

  beforeAll(async () => {
    moto = await startMoto();
    ec2 = ec2Client(moto.endpoint, region);
    world = await createWorld(ec2, {
      region,
      subnets,
      instances: {
        "us-east-1a": [{ tags: egress }, { tags: egress }, { tags: egress }, {}],
        "us-east-1b": [{ tags: egress }, { tags: egress }, { tags: egress }],
        "us-east-1c": [{}],
      },
    });
    const vpc = await ec2.send(
      new AssociateVpcCidrBlockCommand({ VpcId: world.vpcId, AmazonProvidedIpv6CidrBlock: true }),
    );
    const block = parsePrefix(vpc.Ipv6CidrBlockAssociation!.Ipv6CidrBlock!);
    for (const [i, zone] of Object.keys(subnets).entries()) {
      v6[zone] = formatPrefix(6, block.network + (BigInt(i) << 64n), 64);
      await ec2.send(
        new AssociateSubnetCidrBlockCommand({ SubnetId: world.subnetIds[zone], Ipv6CidrBlock: v6[zone] }),
      );
    }
    await h.program(async () => {
      const provisioner = { kind: "aws" as const, region, endpoint: moto.endpoint, hostTags: egress };
      const pools = Object.fromEntries(
        Object.entries(zones).map(([suffix, zone]) => [
          zone,
          new IpPool(`egress-${suffix}`, { ranges: [{ subnet: v6[zone]! }], cloudReserved: "aws" }),
        ]),
      );
      const ip = new EgressIp("team-a", {
        pool: pools,
        namespace: "team-a",
        failureDomains: Object.values(zones),
        provisioner,
      });
      const out: Record<string, unknown> = {};
      Object.keys(zones).forEach((suffix, i) => {
        out[`ip${suffix}`] = ip.ips.apply((l) => l[i]);
        out[`host${suffix}`] = ip.hosts.apply((l) => l[i]);
      });
      return out;
    });
  });
  afterAll(async () => {
    h.dispose();
    await moto?.stop();
  });

  it("shows the planned IPv6 addresses (first after the AWS-reserved ones) and hosts at preview", async () => {
    const preview = await h.preview();
    for (const [suffix, zone] of Object.entries(zones)) {
      expect(preview.planned(`IpAllocation::team-a-${zone}`)).toMatchObject({ ip: at(zone, "4") });
      const planned = preview.planned(`EgressIpAssignment::team-a-${zone}`);
      expect(planned).toMatchObject({ ip: at(zone, "4"), failureDomain: zone });
      expect(tagged(zone)).toContain(planned!.host);
      previewHosts[suffix] = planned!.host as string;
    }
    expect(await placed()).toEqual({});
  });

  it("puts each address on the host preview showed, as an IPv6 address of its primary interface with its owner tag", async () => {
    const out = await outputs();
    expect(out).toMatchObject({ ip1a: at(zones["1a"], "4"), ip1b: at(zones["1b"], "4") });
    expect(out).toMatchObject({ host1a: previewHosts["1a"], host1b: previewHosts["1b"] });
    expect(await placed()).toEqual({ [out.host1a!]: [out.ip1a], [out.host1b!]: [out.ip1b] });
    const tags = Object.fromEntries(((await eniOf(out.host1a!)).TagSet ?? []).map((t) => [t.Key, t.Value]));
    expect(tags[ownerTagKey(out.ip1a!)]).toMatch(/^sha256:[0-9a-f]{40}$/);
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
    const run = await check();
    expect(run.stdout).toContain("no drift");
    expect(run.code).toBe(0);
  });

  it("finds an address removed behind its back at refresh, and the next up puts it back", async () => {
    const before = await outputs();
    await ec2.send(
      new UnassignIpv6AddressesCommand({
        NetworkInterfaceId: (await eniOf(before.host1a!)).NetworkInterfaceId,
        Ipv6Addresses: [before.ip1a!],
      }),
    );
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({ update: 1 });
    const assignment = (await h.resources()).find((r) =>
      r.urn.endsWith("EgressIpAssignment::team-a-us-east-1a"),
    )!;
    expect(assignment.outputs).toMatchObject({
      host: "",
      placement: { state: "missing", from: before.host1a },
    });
    const after = await outputs();
    expect(after.ip1a).toBe(before.ip1a);
    expect((await placed())[after.host1a!]).toEqual([before.ip1a]);
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("check finds an address missing and one misplaced where a move of its own left it; refresh and up repair both", async () => {
    const before = await outputs();
    const [missing, moved] = [before.ip1a!, before.ip1b!];
    await ec2.send(
      new UnassignIpv6AddressesCommand({
        NetworkInterfaceId: (await eniOf(before.host1a!)).NetworkInterfaceId,
        Ipv6Addresses: [missing],
      }),
    );
    const otherB = tagged(zones["1b"]).find((id) => id !== before.host1b)!;
    await ec2.send(
      new UnassignIpv6AddressesCommand({
        NetworkInterfaceId: (await eniOf(before.host1b!)).NetworkInterfaceId,
        Ipv6Addresses: [moved],
      }),
    );
    const otherEni = (await eniOf(otherB)).NetworkInterfaceId!;
    // With its record, as a move of its own killed after the reassignment leaves it: refresh and up
    // finish the move (before issue 54, its removal came first). Moved without it, it is nobody's there.
    const record = (await eniOf(before.host1b!)).TagSet!.find((t) => t.Key === ownerTagKey(moved))!;
    await ec2.send(new CreateTagsCommand({ Resources: [otherEni], Tags: [record] }));
    await ec2.send(new AssignIpv6AddressesCommand({ NetworkInterfaceId: otherEni, Ipv6Addresses: [moved] }));

    const run = await check("--json");
    expect(run.code).toBe(1);
    const doc = JSON.parse(run.stdout) as { findings: { kind: string; ip: string; fix: string[] }[] };
    const refreshUp = [`pulumi refresh --stack ${h.fqStackName}`, `pulumi up --stack ${h.fqStackName}`];
    expect(doc.findings).toEqual([
      expect.objectContaining({ kind: "missing", ip: missing, expectedHost: before.host1a, fix: refreshUp }),
      expect.objectContaining({
        kind: "misplaced",
        ip: moved,
        expectedHost: before.host1b,
        actualHost: otherB,
        fix: refreshUp,
      }),
    ]);
    // The fixes as printed: refresh and up.
    await h.refresh();
    expect(changesOf((await h.up()).summary.resourceChanges)).toMatchObject({ update: 2 });
    const now = await placed();
    expect(Object.values(now).flat().sort()).toEqual([missing, moved].sort());
    expect((await check()).code).toBe(0);
  });

  it("moves an address off a stopped host and one off a terminated host on plain up, leaving one holder each", async () => {
    const before = await outputs();
    await ec2.send(new StopInstancesCommand({ InstanceIds: [before.host1a!] }));
    await ec2.send(new TerminateInstancesCommand({ InstanceIds: [before.host1b!] }));
    const preview = await h.preview();
    for (const zone of Object.values(zones)) {
      expect(preview.op(`EgressIpAssignment::team-a-${zone}`)).toBe("update");
    }
    const after = await outputs();
    expect(after.host1a).not.toBe(before.host1a);
    expect(after.host1b).not.toBe(before.host1b);
    expect(tagged(zones["1a"])).toContain(after.host1a);
    expect(tagged(zones["1b"])).toContain(after.host1b);
    expect(after).toMatchObject({ ip1a: before.ip1a, ip1b: before.ip1b });
    const now = await placed();
    // The stopped host's interface still exists: the address left it (EC2 cannot reassign IPv6).
    expect(now[before.host1a!] ?? []).toEqual([]);
    expect(now[after.host1a!]).toEqual([before.ip1a]);
    expect(now[after.host1b!]).toEqual([before.ip1b]);
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("never plans an IPv6 address an interface uses outside Pulumi (usedAddresses)", async () => {
    const [eni] = await interfacesIn(ec2, [world.subnetIds["us-east-1c"]!]);
    const c = "us-east-1c";
    await ec2.send(
      new AssignIpv6AddressesCommand({
        NetworkInterfaceId: eni!.NetworkInterfaceId,
        Ipv6Addresses: [at(c, "4"), at(c, "5")],
      }),
    );
    const other = Harness.create("aws-ipv6-observed", { env: motoCredentials });
    try {
      const { IpAllocation } = other.pkg<Pkg>("pulumi-egress-ipam");
      await other.program(async () => {
        const pool = new IpPool("c", { ranges: [{ subnet: v6[c]! }], cloudReserved: "aws" });
        const observeWith = { kind: "aws" as const, region, endpoint: moto.endpoint };
        new IpAllocation("blind", { pool });
        new IpAllocation("observed", { pool, observeWith });
      });
      const preview = await other.preview();
      expect(preview.planned("blind")).toMatchObject({ ip: at(c, "4") });
      expect(preview.planned("observed")).toMatchObject({ ip: at(c, "6") });
    } finally {
      other.dispose();
    }
  });

  it("takes every address and owner tag off on destroy", async () => {
    const before = await outputs();
    await h.destroy();
    expect((await h.resources()).filter((r) => r.type !== "pulumi:pulumi:Stack")).toEqual([]);
    const left = await placed();
    expect(
      Object.values(left)
        .flat()
        .filter((ip) => ip === before.ip1a || ip === before.ip1b),
    ).toEqual([]);
    for (const id of [...tagged(zones["1a"]), ...tagged(zones["1b"])]) {
      const keys = ((await eniOf(id)).TagSet ?? []).map((t) => t.Key);
      expect(keys.filter((k) => k?.startsWith("egress-ipam/"))).toEqual([]);
    }
  });
});
