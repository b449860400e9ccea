// A change of the aws provisioner's `elasticIps`, end to end with the real engine against moto
// (through the fault proxy's eipPrivateIps rewrite: moto lacks an Elastic IP's association with a
// secondary private IP). A dual-stack EgressIp over two zones: each IPv4 address gets an Elastic IP,
// each IPv6 address none. Only the assignment whose own Elastic IP changes is updated (preview says
// so, up does exactly that, moto's Elastic IPs show it); an adopted Elastic IP's public address is
// known at preview, and one that does not exist is refused at preview naming it.
import {
  AllocateAddressCommand,
  DescribeAddressesCommand,
  DescribeNetworkInterfacesCommand,
  type Address,
  type EC2Client,
} from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eipAddressTag } from "../../provider/provisioners/aws/elastic-ips";
import { eipPrivateIps, startFaultProxy, type FaultProxy } from "../support/ec2-fault-proxy";
import { changesOf, Harness } from "../support/harness";
import {
  createWorld,
  ec2Client,
  motoCredentials,
  startMoto,
  type MotoServer,
  type World,
} from "../support/moto";
import { addIpv6Blocks, dualStackCniConfig } from "../support/moto-ipv6";

type Pkg = typeof import("../../provider/index");
type ElasticIps = "allocate" | { adopt: Record<string, string>; allocate?: boolean } | undefined;

const region = "us-east-1";
const zones = ["us-east-1a", "us-east-1b"] as const;
const subnets = { "us-east-1a": "10.0.1.0/24", "us-east-1b": "10.0.2.0/24" };
const egress = { role: "egress" };
/** The IPv4 address planned in each zone (the instances' primary addresses are at the top). */
const ipA = "10.0.1.4";
const ipB = "10.0.2.4";
const assignment = (zone: string, v6 = false) => `EgressIpAssignment::team-${zone}${v6 ? "-ipv6" : ""}`;

describe("a change of elasticIps updates only the assignments whose Elastic IP changed, against moto (fault-injected: moto lacks an Elastic IP's association with a secondary private IP)", () => {
  const h = Harness.create("aws-eip-change", { env: motoCredentials });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  let moto: MotoServer;
  let proxy: FaultProxy;
  let ec2: EC2Client;
  let world: World;
  let v6: Record<string, string> = {};
  /** An Elastic IP made by hand, for `adopt`. */
  let adopted: { id: string; publicIp: string };
  let elasticIps: ElasticIps = "allocate";

  /** Every Elastic IP, read through the proxy (as the provisioner reads them), by allocation ID. */
  const addresses = async (): Promise<Record<string, Address>> => {
    const list = (await ec2Client(proxy.endpoint, region).send(new DescribeAddressesCommand({}))).Addresses;
    return Object.fromEntries((list ?? []).map((a) => [a.AllocationId!, a]));
  };
  /** The Elastic IP associated with a private address, if one is. */
  const on = async (ip: string) => Object.values(await addresses()).find((a) => a.PrivateIpAddress === ip);
  /** The network interface that has a private IPv4 address. */
  const eniWith = async (ip: string) =>
    (
      await ec2.send(
        new DescribeNetworkInterfacesCommand({ Filters: [{ Name: "vpc-id", Values: [world.vpcId] }] }),
      )
    ).NetworkInterfaces!.find((n) => n.PrivateIpAddresses?.some((a) => a.PrivateIpAddress === ip))!
      .NetworkInterfaceId;
  const publicIps = async () => (await h.up()).outputs.publicIps!.value as (string | null)[];
  /** What a preview plans for each assignment: its operation, and its planned public address. */
  const plan = async () => {
    const preview = await h.preview();
    const out: Record<string, { op?: string; publicIp?: unknown }> = {};
    for (const zone of zones) {
      for (const name of [assignment(zone), assignment(zone, true)]) {
        out[name] = { op: preview.op(name), publicIp: preview.planned(name)?.publicIp };
      }
    }
    return { out, summary: changesOf(preview.changeSummary) };
  };

  beforeAll(async () => {
    moto = await startMoto();
    proxy = await startFaultProxy(moto.endpoint);
    proxy.rewrite(eipPrivateIps);
    ec2 = ec2Client(moto.endpoint, region);
    world = await createWorld(ec2, {
      region,
      subnets,
      instances: {
        "us-east-1a": [200, 201].map((n) => ({ tags: egress, privateIp: `10.0.1.${n}` })),
        "us-east-1b": [200, 201].map((n) => ({ tags: egress, privateIp: `10.0.2.${n}` })),
      },
    });
    v6 = await addIpv6Blocks(ec2, world, [...zones]);
    const made = await ec2.send(new AllocateAddressCommand({ Domain: "vpc" }));
    adopted = { id: made.AllocationId!, publicIp: made.PublicIp! };
    await h.program(async () => {
      const pools = Object.fromEntries(
        zones.map((zone) => [
          zone,
          new IpPool(`egress-${zone}`, {
            cniConfig: dualStackCniConfig(subnets[zone], v6[zone]!),
            cloudReserved: "aws",
          }),
        ]),
      );
      const e = new EgressIp("team", {
        pool: pools,
        namespace: "team",
        failureDomains: [...zones],
        families: "dual",
        provisioner: {
          kind: "aws",
          region,
          endpoint: proxy.endpoint,
          hostTags: egress,
          ...(elasticIps ? { elasticIps } : {}),
        },
      });
      return { ips: e.ips, publicIps: e.publicIps };
    });
  });
  afterAll(async () => {
    h.dispose();
    await proxy?.stop();
    await moto?.stop();
  });

  it('with "allocate", each IPv4 address gets an Elastic IP of its own and each IPv6 address none', async () => {
    const up = await h.up();
    expect(up.outputs.ips!.value).toEqual([ipA, ipB]);
    const [a, b] = [await on(ipA), await on(ipB)];
    expect(a?.NetworkInterfaceId).toBe(await eniWith(ipA));
    expect(b?.NetworkInterfaceId).toBe(await eniWith(ipB));
    expect(up.outputs.publicIps!.value).toEqual([a!.PublicIp, b!.PublicIp]);
    // Two allocated, and the one made by hand.
    expect(Object.keys(await addresses()).sort()).toEqual(
      [a!.AllocationId, b!.AllocationId, adopted.id].sort(),
    );
  });

  it("adopting the Elastic IP an address has keeps it, and so does going back to allocate: same public address, nothing released", async () => {
    const a = (await on(ipA))!;
    const before = Object.keys(await addresses()).sort();
    for (const setting of [{ adopt: { [ipA]: a.AllocationId! }, allocate: true }, "allocate"] as const) {
      elasticIps = setting;
      const { out, summary } = await plan();
      expect(summary).toEqual({ update: 1 });
      expect(out[assignment(zones[0])]).toEqual({ op: "update", publicIp: a.PublicIp });
      expect((await publicIps())[0]).toBe(a.PublicIp);
      expect(Object.keys(await addresses()).sort()).toEqual(before);
      expect(await on(ipA)).toMatchObject({
        AllocationId: a.AllocationId,
        NetworkInterfaceId: await eniWith(ipA),
      });
      expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
    }
  });

  it("adopting an Elastic IP for one address updates that assignment alone, showing its public address at preview", async () => {
    const b = (await on(ipB))!;
    const allocatedA = (await on(ipA))!.AllocationId!;
    elasticIps = { adopt: { [ipA]: adopted.id }, allocate: true };
    const { out, summary } = await plan();
    expect(summary).toEqual({ update: 1 });
    expect(out[assignment(zones[0])]).toEqual({ op: "update", publicIp: adopted.publicIp });
    for (const name of [assignment(zones[1]), assignment(zones[0], true), assignment(zones[1], true)]) {
      expect(out[name]!.op).toBe("same");
    }
    expect(await publicIps()).toEqual([adopted.publicIp, b.PublicIp]);
    const after = await addresses();
    // The adopted one is on 10.0.1.4's interface; the one allocated for it is released; 10.0.2.4's
    // keeps its allocation and its association.
    expect(after[adopted.id]).toMatchObject({
      PrivateIpAddress: ipA,
      NetworkInterfaceId: await eniWith(ipA),
    });
    expect(after[allocatedA]).toBeUndefined();
    expect(after[b.AllocationId!]).toMatchObject({ AssociationId: b.AssociationId, PrivateIpAddress: ipB });
    expect(Object.keys(after).sort()).toEqual([adopted.id, b.AllocationId].sort());
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("refuses at preview an adopted allocation that does not exist, naming it, and changes nothing", async () => {
    const before = await addresses();
    elasticIps = { adopt: { [ipA]: "eipalloc-0000000000dead" }, allocate: true };
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toContain("[NOT_FOUND]");
    expect(err).toContain(
      `the Elastic IP eipalloc-0000000000dead that elasticIps.adopt gives ${ipA} does not exist in ${region}`,
    );
    expect(await addresses()).toEqual(before);
    elasticIps = { adopt: { [ipA]: adopted.id }, allocate: true };
  });

  it("dropping allocate updates only the address that had an allocated Elastic IP: disassociated and released", async () => {
    const b = (await on(ipB))!;
    elasticIps = { adopt: { [ipA]: adopted.id } };
    const { out, summary } = await plan();
    expect(summary).toEqual({ update: 1 });
    expect(out[assignment(zones[1])]!.op).toBe("update");
    expect(out[assignment(zones[0])]).toEqual({ op: "same", publicIp: adopted.publicIp });
    expect(await publicIps()).toEqual([adopted.publicIp, null]); // none: null in stack outputs
    const after = await addresses();
    expect(after[b.AllocationId!]).toBeUndefined();
    expect(after[adopted.id]).toMatchObject({ PrivateIpAddress: ipA });
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("dropping elasticIps disassociates the adopted Elastic IP and keeps it; destroy leaves it as it was made", async () => {
    elasticIps = undefined;
    const { out, summary } = await plan();
    expect(summary).toEqual({ update: 1 });
    expect(out[assignment(zones[0])]!.op).toBe("update");
    expect(await publicIps()).toEqual([null, null]);
    const after = await addresses();
    expect(Object.keys(after)).toEqual([adopted.id]);
    expect(after[adopted.id]!.AssociationId).toBeUndefined();
    expect((after[adopted.id]!.Tags ?? []).map((t) => t.Key)).not.toContain(eipAddressTag);
    await h.destroy();
    expect(Object.keys(await addresses())).toEqual([adopted.id]);
  });
});
