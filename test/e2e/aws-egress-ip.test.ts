import {
  AssignPrivateIpAddressesCommand,
  TerminateInstancesCommand,
  UnassignPrivateIpAddressesCommand,
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
const zones = { "1a": "us-east-1a", "1b": "us-east-1b" } as const;
const subnets = { "us-east-1a": "10.0.1.0/24", "us-east-1b": "10.0.2.0/24", "us-east-1c": "10.0.3.0/24" };
const egress = { role: "egress" };

// A subnet lives in one availability zone, so each zone has its own pool over its own subnet; one
// EgressIp takes an address per zone from that zone's pool.
describe("EgressIp with the aws provisioner, against moto", () => {
  const h = Harness.create("aws-egress", { env: motoCredentials });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  let moto: MotoServer;
  let ec2: EC2Client;
  let world: World;
  const previewHosts: Record<string, string> = {};

  const program = () => async () => {
    const provisioner = { kind: "aws" as const, region, endpoint: moto.endpoint, hostTags: egress };
    const pools = Object.fromEntries(
      Object.entries(zones).map(([suffix, zone]) => [
        zone,
        new IpPool(`egress-${suffix}`, { ranges: [{ subnet: subnets[zone] }], cloudReserved: "aws" }),
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
  };
  const tagged = (zone: string) => world.instanceIds[zone]!.slice(0, 2);
  const placed = () => secondaryIps(ec2, [world.subnetIds["us-east-1a"]!, world.subnetIds["us-east-1b"]!]);
  const outputs = async () => {
    const up = await h.up();
    return Object.fromEntries(Object.entries(up.outputs).map(([k, v]) => [k, v.value as string]));
  };

  beforeAll(async () => {
    moto = await startMoto();
    ec2 = ec2Client(moto.endpoint, region);
    world = await createWorld(ec2, {
      region,
      subnets,
      instances: {
        "us-east-1a": [
          { tags: egress, privateIp: "10.0.1.200" },
          { tags: egress, privateIp: "10.0.1.201" },
          { privateIp: "10.0.1.202" },
        ],
        "us-east-1b": [
          { tags: egress, privateIp: "10.0.2.200" },
          { tags: egress, privateIp: "10.0.2.201" },
        ],
        "us-east-1c": [{ privateIp: "10.0.3.200" }],
      },
    });
    await h.program(program());
  });
  afterAll(async () => {
    h.dispose();
    await moto?.stop();
  });

  it("shows the planned addresses (first after the AWS-reserved ones) and hosts at preview", async () => {
    const preview = await h.preview();
    expect(preview.planned("IpAllocation::team-a-us-east-1a")).toMatchObject({ ip: "10.0.1.4" });
    expect(preview.planned("IpAllocation::team-a-us-east-1b")).toMatchObject({ ip: "10.0.2.4" });
    for (const [suffix, zone] of Object.entries(zones)) {
      const planned = preview.planned(`EgressIpAssignment::team-a-${zone}`);
      expect(planned).toMatchObject({ ip: `10.0.${suffix === "1a" ? 1 : 2}.4`, failureDomain: zone });
      expect(tagged(zone)).toContain(planned!.host);
      previewHosts[suffix] = planned!.host as string;
    }
    expect(await placed()).toEqual({});
  });

  it("places each address as a secondary IP of the host preview showed", async () => {
    const out = await outputs();
    expect(out).toMatchObject({ ip1a: "10.0.1.4", ip1b: "10.0.2.4" });
    expect(out).toMatchObject({ host1a: previewHosts["1a"], host1b: previewHosts["1b"] });
    expect(await placed()).toEqual({ [out.host1a!]: ["10.0.1.4"], [out.host1b!]: ["10.0.2.4"] });
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("detects an address removed behind its back at refresh, and the next up puts it back", async () => {
    const before = await outputs();
    const eni = (await interfacesIn(ec2, [world.subnetIds[zones["1a"]]!])).find(
      (n) => n.Attachment?.InstanceId === before.host1a,
    )!;
    await ec2.send(
      new UnassignPrivateIpAddressesCommand({
        NetworkInterfaceId: eni.NetworkInterfaceId,
        PrivateIpAddresses: ["10.0.1.4"],
      }),
    );
    const refresh = await h.refresh();
    expect(changesOf(refresh.summary.resourceChanges)).toEqual({ update: 1 });
    const assignment = (await h.resources()).find((r) =>
      r.urn.endsWith("EgressIpAssignment::team-a-us-east-1a"),
    )!;
    expect(assignment.outputs).toMatchObject({
      host: "",
      placement: { state: "missing", from: before.host1a },
    });
    expect((assignment.outputs!.placement as { reason: string }).reason).toMatch(
      /10\.0\.1\.4 is not assigned to host/,
    );

    const after = await outputs();
    expect(after.ip1a).toBe("10.0.1.4");
    expect(tagged(zones["1a"])).toContain(after.host1a);
    expect((await placed())[after.host1a!]).toEqual(["10.0.1.4"]);
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("moves the address off a host that vanished to a healthy host of the same zone on plain up", async () => {
    const before = await outputs();
    await ec2.send(new TerminateInstancesCommand({ InstanceIds: [before.host1b!] }));
    const preview = await h.preview();
    expect(preview.op("EgressIpAssignment::team-a-us-east-1b")).toBe("update");
    expect(preview.planned("EgressIpAssignment::team-a-us-east-1b")?.host).not.toBe(before.host1b);
    expect(preview.op("EgressIpAssignment::team-a-us-east-1a")).toBe("same");
    const up = await h.up();
    const host1b = up.outputs.host1b!.value as string;
    expect(host1b).not.toBe(before.host1b);
    expect(tagged(zones["1b"])).toContain(host1b);
    expect(up.outputs.ip1b!.value).toBe("10.0.2.4");
    const now = await placed();
    expect(now[host1b]).toEqual(["10.0.2.4"]);
    expect(now[before.host1b!] ?? []).toEqual([]);
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("never plans an address that an interface uses outside Pulumi (usedAddresses)", async () => {
    // Secondary addresses, which moto's addresses.private-ip-address filter would not find.
    const [eni] = await interfacesIn(ec2, [world.subnetIds["us-east-1c"]!]);
    await ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: eni!.NetworkInterfaceId,
        PrivateIpAddresses: ["10.0.3.4", "10.0.3.5"],
      }),
    );
    const other = Harness.create("aws-observed", { env: motoCredentials });
    try {
      const { IpAllocation } = other.pkg<Pkg>("pulumi-egress-ipam");
      await other.program(async () => {
        const pool = new IpPool("c", { ranges: [{ subnet: subnets["us-east-1c"] }], cloudReserved: "aws" });
        const observeWith = { kind: "aws" as const, region, endpoint: moto.endpoint };
        new IpAllocation("blind", { pool });
        new IpAllocation("observed", { pool, observeWith });
      });
      const preview = await other.preview();
      // Without a provisioner's view the pool would hand out 10.0.3.4, which is in use.
      expect(preview.planned("blind")).toMatchObject({ ip: "10.0.3.4" });
      expect(preview.planned("observed")).toMatchObject({ ip: "10.0.3.6" });
    } finally {
      other.dispose();
    }
  });

  it("leaves no secondary IP behind on destroy", async () => {
    await h.destroy();
    expect((await h.resources()).filter((r) => r.type !== "pulumi:pulumi:Stack")).toEqual([]);
    expect(await placed()).toEqual({});
  });
});
