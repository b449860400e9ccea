// Public egress with Elastic IPs end to end: an EgressIp whose aws provisioner has
// `elasticIps: "allocate"`, with the real engine against moto (through the fault proxy's
// eipPrivateIps rewrite: moto lacks an Elastic IP's association with a secondary private IP). up
// allocates and associates, refresh finds an association removed and up restores it, up moves the
// address and its Elastic IP off a terminated host, destroy releases it.
import {
  DescribeAddressesCommand,
  DisassociateAddressCommand,
  TerminateInstancesCommand,
  type Address,
  type EC2Client,
} from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eipAddressTag, eipOwnerTag } from "../../provider/provisioners/aws/elastic-ips";
import { eipPrivateIps, startFaultProxy, type FaultProxy } from "../support/ec2-fault-proxy";
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
describe('EgressIp with elasticIps: "allocate", against moto (fault-injected: moto lacks an Elastic IP\'s association with a secondary private IP)', () => {
  const h = Harness.create("aws-eip", { env: motoCredentials });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  let moto: MotoServer;
  let proxy: FaultProxy;
  let ec2: EC2Client;
  let world: World;

  const eniOf = async (id: string) =>
    (await interfacesIn(ec2, [world.subnetIds[zone]!])).find((n) => n.Attachment?.InstanceId === id)!
      .NetworkInterfaceId!;
  /** Every Elastic IP, read through the proxy (as the provisioner reads them). */
  const addresses = async (): Promise<Address[]> =>
    (await ec2Client(proxy.endpoint, region).send(new DescribeAddressesCommand({}))).Addresses ?? [];
  const outputs = async () => {
    const up = await h.up();
    return Object.fromEntries(Object.entries(up.outputs).map(([k, v]) => [k, v.value as string]));
  };
  const count = (action: string) => proxy.calls.filter((c) => c.action === action).length;

  beforeAll(async () => {
    moto = await startMoto();
    proxy = await startFaultProxy(moto.endpoint);
    proxy.rewrite(eipPrivateIps);
    ec2 = ec2Client(moto.endpoint, region);
    world = await createWorld(ec2, {
      region,
      subnets: { [zone]: subnet },
      instances: { [zone]: [{ tags: egress }, { tags: egress }] },
    });
    await h.program(async () => {
      const provisioner = {
        kind: "aws" as const,
        region,
        endpoint: proxy.endpoint,
        hostTags: egress,
        elasticIps: "allocate" as const,
      };
      const pool = new IpPool("egress", { ranges: [{ subnet }], cloudReserved: "aws" });
      const e = new EgressIp("team", { pool, namespace: "team", failureDomains: [zone], provisioner });
      return {
        ip: e.ips.apply((l) => l[0]),
        host: e.hosts.apply((l) => l[0]),
        publicIp: e.publicIps.apply((l) => l[0]),
      };
    });
  });
  afterAll(async () => {
    h.dispose();
    await proxy?.stop();
    await moto?.stop();
  });

  it("allocates a tagged Elastic IP and associates it with the address on its host; a second up changes nothing", async () => {
    const out = await outputs();
    expect(out.ip).toMatch(/^10\.0\.1\.\d+$/);
    const [eip, ...more] = await addresses();
    expect(more).toEqual([]);
    expect(eip).toMatchObject({ NetworkInterfaceId: await eniOf(out.host!), PrivateIpAddress: out.ip });
    // The EgressIp's publicIps output is the Elastic IP's public address.
    expect(out.publicIp).toBe(eip!.PublicIp);
    const tags = Object.fromEntries((eip!.Tags ?? []).map((t) => [t.Key, t.Value]));
    expect(tags).toMatchObject({
      [eipAddressTag]: out.ip,
      [eipOwnerTag]: expect.stringMatching(/^sha256:/),
    });
    const allocations = count("AllocateAddress");
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
    expect(count("AllocateAddress")).toBe(allocations);
  });

  it("finds an association removed by hand at refresh, and up restores the same Elastic IP", async () => {
    const [before] = await addresses();
    await ec2.send(new DisassociateAddressCommand({ AssociationId: before!.AssociationId }));
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({ update: 1 });
    const assignment = (await h.resources()).find((r) => r.urn.endsWith(`EgressIpAssignment::team-${zone}`))!;
    expect((assignment.outputs!.placement as { reason: string }).reason).toMatch(
      /does not leave from its public address: its Elastic IP .* is associated with nothing/,
    );
    const out = await outputs();
    expect(await addresses()).toEqual([
      expect.objectContaining({
        AllocationId: before!.AllocationId,
        NetworkInterfaceId: await eniOf(out.host!),
        PrivateIpAddress: out.ip,
      }),
    ]);
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("moves the address and its Elastic IP off a terminated host on plain up", async () => {
    const before = await outputs();
    const [eip] = await addresses();
    await ec2.send(new TerminateInstancesCommand({ InstanceIds: [before.host!] }));
    const after = await outputs();
    expect(after.host).not.toBe(before.host);
    expect((await secondaryIps(ec2, [world.subnetIds[zone]!]))[after.host!]).toEqual([before.ip]);
    expect(await addresses()).toEqual([
      expect.objectContaining({
        AllocationId: eip!.AllocationId,
        PublicIp: eip!.PublicIp,
        NetworkInterfaceId: await eniOf(after.host!),
        PrivateIpAddress: before.ip,
      }),
    ]);
  });

  it("disassociates and releases the Elastic IP on destroy", async () => {
    await h.destroy();
    expect(await addresses()).toEqual([]);
    expect(await secondaryIps(ec2, [world.subnetIds[zone]!])).toEqual({});
  });
});
