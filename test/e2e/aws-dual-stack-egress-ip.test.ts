// Dual-stack egress on AWS, end to end with the real engine against moto: each zone's pool is its
// subnet's IPv4 /24 and IPv6 /64 (a CNI config of two range sets), and an EgressIp with families
// "dual" puts one secondary IPv4 and one IPv6 address per zone on hosts' primary interfaces.
// Preview lists exactly what up assigns, refresh finds an address of each family removed by hand and
// up puts them back, up moves what a terminated host carried, destroy leaves nothing.
import {
  TerminateInstancesCommand,
  UnassignIpv6AddressesCommand,
  UnassignPrivateIpAddressesCommand,
  type EC2Client,
} from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
import { addIpv6Blocks, dualStackCniConfig, inSubnet6 } from "../support/moto-ipv6";

type Pkg = typeof import("../../provider/index");
type Addresses = Record<string, { ipv4?: { ip: string; host: string }; ipv6?: { ip: string; host: string } }>;

const region = "us-east-1";
const zones = ["us-east-1a", "us-east-1b"] as const;
const subnets = { "us-east-1a": "10.0.1.0/24", "us-east-1b": "10.0.2.0/24" };
const egress = { role: "egress" };
/** The assignments' logical names: per zone, the IPv4 one and the IPv6 one. */
const names = zones.flatMap((z) => [`team-a-${z}`, `team-a-${z}-ipv6`]);

describe("dual-stack EgressIp over two zones with the aws provisioner, against moto", () => {
  const h = Harness.create("aws-dual", { env: motoCredentials });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  let moto: MotoServer;
  let ec2: EC2Client;
  let world: World;
  /** Each zone's subnet IPv6 /64. */
  let v6: Record<string, string> = {};
  /** Where each assignment is (by logical name): what preview planned, then what up did. */
  const where: Record<string, { ip: string; host: string }> = {};

  const allSubnets = () => Object.values(world.subnetIds);
  /** Every non-primary address (secondary IPv4 and IPv6) by instance, sorted; instances with none left out. */
  const placed = async () => {
    const out: Record<string, string[]> = {};
    for (const eni of await interfacesIn(ec2, allSubnets())) {
      const ips = [
        ...(eni.PrivateIpAddresses ?? []).filter((a) => !a.Primary).map((a) => a.PrivateIpAddress!),
        ...(eni.Ipv6Addresses ?? []).map((a) => a.Ipv6Address!),
      ];
      if (ips.length > 0) out[eni.Attachment?.InstanceId ?? eni.NetworkInterfaceId!] = ips.sort();
    }
    return out;
  };
  /** What `where` says should be on the hosts, in the shape of {@link placed}. */
  const expectedPlacement = () => {
    const out: Record<string, string[]> = {};
    for (const { ip, host } of Object.values(where)) (out[host] ??= []).push(ip);
    for (const ips of Object.values(out)) ips.sort();
    return out;
  };
  const eniOf = async (id: string) =>
    (await interfacesIn(ec2, allSubnets())).find((n) => n.Attachment?.InstanceId === id)!.NetworkInterfaceId!;
  /** Each assignment's ip and host as state has them, by logical name. */
  const recorded = async () => {
    const out: Record<string, { ip: string; host: string }> = {};
    for (const r of await h.resources()) {
      const n = names.find((x) => r.urn.endsWith(`EgressIpAssignment::${x}`));
      if (n) out[n] = { ip: String(r.outputs?.ip), host: String(r.outputs?.host) };
    }
    return out;
  };
  const tagged = (zone: string) => world.instanceIds[zone]!.slice(0, 3);
  const check = (...args: string[]) => runCli(["check", "--stack", h.fqStackName, ...args], h.env);

  beforeAll(async () => {
    moto = await startMoto();
    ec2 = ec2Client(moto.endpoint, region);
    world = await createWorld(ec2, {
      region,
      subnets,
      instances: {
        // Primary addresses at the top of the subnets, so the pools' first free address is .4.
        "us-east-1a": [200, 201, 202, 203].map((n) => ({
          tags: n < 203 ? egress : {},
          privateIp: `10.0.1.${n}`,
        })),
        "us-east-1b": [200, 201, 202].map((n) => ({ tags: egress, privateIp: `10.0.2.${n}` })),
      },
    });
    v6 = await addIpv6Blocks(ec2, world, [...zones]);
    await h.program(async () => {
      const provisioner = { kind: "aws" as const, region, endpoint: moto.endpoint, hostTags: egress };
      const pools = Object.fromEntries(
        zones.map((zone) => [
          zone,
          new IpPool(`egress-${zone}`, {
            cniConfig: dualStackCniConfig(subnets[zone], v6[zone]!),
            cloudReserved: "aws",
          }),
        ]),
      );
      const ip = new EgressIp("team-a", {
        pool: pools,
        namespace: "team-a",
        failureDomains: [...zones],
        families: "dual",
        provisioner,
      });
      return { ips: ip.ips, hosts: ip.hosts, addresses: ip.addresses };
    });
  });
  afterAll(async () => {
    h.dispose();
    await moto?.stop();
  });

  it("plans an IPv4 and an IPv6 address per zone at preview (first after the AWS-reserved ones), each on a tagged host of its zone", async () => {
    const preview = await h.preview();
    for (const zone of zones) {
      for (const [n, ip] of [
        [`team-a-${zone}`, subnets[zone].replace(/0\/24$/, "4")],
        [`team-a-${zone}-ipv6`, inSubnet6(v6[zone]!, "4")],
      ] as const) {
        const planned = preview.planned(`EgressIpAssignment::${n}`)!;
        expect(planned).toMatchObject({ ip, failureDomain: zone });
        expect(tagged(zone)).toContain(planned.host);
        where[n] = { ip, host: String(planned.host) };
      }
    }
    expect(await placed()).toEqual({});
  });

  it("up assigns exactly the previewed addresses on the previewed hosts, both families; a second up and check find nothing to do", async () => {
    const up = await h.up();
    expect(await recorded()).toEqual(where);
    expect(await placed()).toEqual(expectedPlacement());
    const addresses = up.outputs.addresses!.value as Addresses;
    for (const zone of zones) {
      expect(addresses[zone]).toEqual({
        ipv4: where[`team-a-${zone}`],
        ipv6: where[`team-a-${zone}-ipv6`],
      });
    }
    expect(up.outputs.ips!.value).toEqual(zones.map((z) => where[`team-a-${z}`]!.ip));
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
    const run = await check();
    expect(run.stdout).toContain("no drift");
    expect(run.code).toBe(0);
  });

  it("finds an IPv4 and an IPv6 address removed by hand at refresh; the next up puts both back", async () => {
    const v4 = where["team-a-us-east-1a"]!;
    const ipv6 = where["team-a-us-east-1b-ipv6"]!;
    await ec2.send(
      new UnassignPrivateIpAddressesCommand({
        NetworkInterfaceId: await eniOf(v4.host),
        PrivateIpAddresses: [v4.ip],
      }),
    );
    await ec2.send(
      new UnassignIpv6AddressesCommand({
        NetworkInterfaceId: await eniOf(ipv6.host),
        Ipv6Addresses: [ipv6.ip],
      }),
    );
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({ update: 2 });
    const state = await h.resources();
    for (const n of ["team-a-us-east-1a", "team-a-us-east-1b-ipv6"]) {
      const r = state.find((x) => x.urn.endsWith(`EgressIpAssignment::${n}`))!;
      expect(r.outputs).toMatchObject({ host: "", placement: { state: "missing", from: where[n]!.host } });
    }
    const preview = await h.preview();
    expect(preview.op("EgressIpAssignment::team-a-us-east-1a")).toBe("update");
    expect(preview.op("EgressIpAssignment::team-a-us-east-1b-ipv6")).toBe("update");
    const planned = Object.fromEntries(
      names.map((n) => [n, preview.planned(`EgressIpAssignment::${n}`)?.host as string]),
    );
    await h.up();
    const now = await recorded();
    for (const n of names) {
      expect(now[n]!.ip).toBe(where[n]!.ip);
      expect(now[n]!.host).toBe(planned[n]);
    }
    Object.assign(where, now);
    expect(await placed()).toEqual(expectedPlacement());
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("moves every address off a terminated host on plain up, to the hosts preview showed, keeping each address", async () => {
    const gone = where["team-a-us-east-1a"]!.host;
    const moved = names.filter((n) => where[n]!.host === gone);
    await ec2.send(new TerminateInstancesCommand({ InstanceIds: [gone] }));
    const preview = await h.preview();
    const planned: Record<string, string> = {};
    for (const n of names) {
      const op = preview.op(`EgressIpAssignment::${n}`);
      expect([n, op]).toEqual([n, moved.includes(n) ? "update" : "same"]);
      planned[n] = String(preview.planned(`EgressIpAssignment::${n}`)?.host ?? where[n]!.host);
      expect(preview.planned(`EgressIpAssignment::${n}`)).toMatchObject({ ip: where[n]!.ip });
    }
    for (const n of moved) {
      expect(planned[n]).not.toBe(gone);
      expect(tagged("us-east-1a")).toContain(planned[n]);
    }
    await h.up();
    const now = await recorded();
    for (const n of names) expect(now[n]).toEqual({ ip: where[n]!.ip, host: planned[n] });
    Object.assign(where, now);
    const after = await placed();
    expect(after[gone] ?? []).toEqual([]);
    expect(after).toEqual(expectedPlacement());
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
    expect((await check()).code).toBe(0);
  });

  it("leaves no address and no owner tag on destroy", async () => {
    await h.destroy();
    expect((await h.resources()).filter((r) => r.type !== "pulumi:pulumi:Stack")).toEqual([]);
    expect(await placed()).toEqual({});
    for (const eni of await interfacesIn(ec2, allSubnets())) {
      const keys = (eni.TagSet ?? []).map((t) => t.Key);
      expect(keys.filter((k) => k?.startsWith("egress-ipam/"))).toEqual([]);
    }
  });
});
