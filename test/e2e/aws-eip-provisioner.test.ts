// Public egress with Elastic IPs: the aws provisioner with `elasticIps`, called as the
// EgressIpAssignment provider calls it (create: addSpecifiedIP, failover: moveIP, refresh: checkIP,
// destroy: removeIP), against moto. moto associates an Elastic IP with an interface and reports the
// interface's primary private IP whatever PrivateIpAddress was asked for, so every test here reads
// DescribeAddresses through the fault proxy's eipPrivateIps rewrite, which reports the address asked
// for, as EC2 does: they are named "(fault-injected: moto lacks …)".
import {
  AllocateAddressCommand,
  AssociateAddressCommand,
  DescribeAddressesCommand,
  DisassociateAddressCommand,
  ReleaseAddressCommand,
  TerminateInstancesCommand,
  type Address,
  type EC2Client,
} from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  elasticIpFor,
  elasticIpsProblems,
  type ElasticIpsSetting,
} from "../../provider/provisioners/config/aws-provisioner-config";
import {
  awsProvisioner,
  ownerTagValue,
  type AwsProvisionerOptions,
} from "../../provider/provisioners/aws/aws-provisioner";
import { eipAddressTag, eipOwnerTag } from "../../provider/provisioners/aws/elastic-ips";
import type { EgressIPProvisioner } from "../../provider/provisioners/egress-ip-provisioner";
import { eipPrivateIps, startFaultProxy, type FaultProxy } from "../support/ec2-fault-proxy";
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

const region = "us-east-1";
const zone = "us-east-1a";
const egress = { role: "egress" };
const fast: AwsProvisionerOptions = {
  retry: { attempts: 4, baseDelayMs: 5, maxDelayMs: 20, consistencyWindowMs: 150 },
  inventoryTtlMs: 0,
};
const ip = "10.0.1.10";

let moto: MotoServer;
let proxy: FaultProxy;
let ec2: EC2Client;
let world: World;

const host = (i: number) => world.instanceIds[zone]![i]!;
const eniOf = async (id: string) =>
  (await interfacesIn(ec2, [world.subnetIds[zone]!])).find((n) => n.Attachment?.InstanceId === id)!
    .NetworkInterfaceId!;
const secondaries = async (id: string) => (await secondaryIps(ec2, [world.subnetIds[zone]!]))[id] ?? [];
/** The provisioner acting for `owner`, with these Elastic IP settings, through the proxy. */
const make = (elasticIps: ElasticIpsSetting | undefined, owner = "stack-1 urn:a", adopt = false) =>
  awsProvisioner(
    { kind: "aws", region, endpoint: proxy.endpoint, hostTags: egress, elasticIps },
    fast,
  ).forOwner(owner, adopt);
/** Every Elastic IP, as the provisioner sees them (through the proxy and its rewrite). */
const addresses = async (): Promise<Address[]> =>
  (await ec2Client(proxy.endpoint, region).send(new DescribeAddressesCommand({}))).Addresses ?? [];
const tagsOf = (a: Address) => Object.fromEntries((a.Tags ?? []).map((t) => [t.Key, t.Value]));
/** The calls of these actions since call `from` (the rewrite needs the whole log: never cleared mid-test). */
const actions = (...names: string[]) => actionsSince(0, ...names);
const actionsSince = (from: number, ...names: string[]) =>
  proxy.calls
    .slice(from)
    .map((c) => c.action)
    .filter((a) => names.includes(a));
/** Associates by hand, through the proxy (whose rewrite reads the log of AssociateAddress calls). */
const associateByHand = async (AllocationId: string, id: string, PrivateIpAddress: string) =>
  ec2Client(proxy.endpoint, region).send(
    new AssociateAddressCommand({
      AllocationId,
      NetworkInterfaceId: await eniOf(id),
      PrivateIpAddress,
      AllowReassociation: true,
    }),
  );
const allocateByHand = async () =>
  (await ec2.send(new AllocateAddressCommand({ Domain: "vpc" }))).AllocationId!;

beforeAll(async () => {
  Object.assign(process.env, motoCredentials);
  moto = await startMoto();
  proxy = await startFaultProxy(moto.endpoint);
  ec2 = ec2Client(moto.endpoint, region);
}, 60_000);

afterAll(async () => {
  await proxy?.stop();
  await moto?.stop();
});

beforeEach(async () => {
  await moto.reset();
  world = await createWorld(ec2, {
    region,
    subnets: { [zone]: "10.0.1.0/24" },
    instances: { [zone]: [{ tags: egress }, { tags: egress }, { tags: egress }] },
  });
  proxy.clear();
  proxy.rewrite(eipPrivateIps);
});

describe("elasticIps settings", () => {
  it.each<[unknown, string[]]>([
    [undefined, []],
    ["allocate", []],
    [{ adopt: { "10.0.1.10": "eipalloc-0123456789abcdef0" } }, []],
    [{ adopt: {}, allocate: true }, []],
    ["always", ["elasticIps"]],
    [{ allocate: true }, ["elasticIps.adopt"]],
    [{ adopt: { "2600::1": "eipalloc-0123456789abcdef0" } }, ['elasticIps.adopt["2600::1"]']],
    [{ adopt: { "10.0.1.10": "eip-1" } }, ['elasticIps.adopt["10.0.1.10"]']],
    [
      { adopt: { "10.0.1.10": "eipalloc-0123456789abcdef0", "10.0.1.11": "eipalloc-0123456789abcdef0" } },
      ['elasticIps.adopt["10.0.1.11"]'],
    ],
    [{ adopt: {}, allocate: "yes", release: true }, ["elasticIps.release", "elasticIps.allocate"]],
  ])("%j has problems with %j", (value, properties) => {
    expect(elasticIpsProblems(value).map((p) => p.property)).toEqual(properties);
  });

  it.each<[ElasticIpsSetting | undefined, string, string | undefined]>([
    [undefined, ip, undefined],
    ["allocate", ip, "allocate"],
    ["allocate", "2600:1f18::10", undefined],
    [{ adopt: { [ip]: "eipalloc-0123456789abcdef0" } }, ip, "eipalloc-0123456789abcdef0"],
    [{ adopt: { [ip]: "eipalloc-0123456789abcdef0" } }, "10.0.1.11", undefined],
    [{ adopt: { [ip]: "eipalloc-0123456789abcdef0" }, allocate: true }, "10.0.1.11", "allocate"],
  ])("%j gives %s: %s", (setting, address, given) => {
    expect(elasticIpFor(setting, address)).toBe(given);
  });

  it("are refused when the provisioner is built", () => {
    expect(() => make("always" as ElasticIpsSetting)).toThrow(
      /INVALID_CONFIG|invalid aws provisioner config: elasticIps/,
    );
  });
});

describe('elasticIps: "allocate" (fault-injected: moto lacks an Elastic IP\'s association with a secondary private IP)', () => {
  let p: EgressIPProvisioner;
  beforeEach(() => {
    p = make("allocate");
  });

  it("allocates a tagged Elastic IP and associates it with the address on the host's interface, once", async () => {
    await p.addSpecifiedIP(ip, host(0));
    const [eip, ...more] = await addresses();
    expect(more).toEqual([]);
    expect(tagsOf(eip!)).toEqual({ [eipOwnerTag]: ownerTagValue("stack-1 urn:a"), [eipAddressTag]: ip });
    expect(eip).toMatchObject({ NetworkInterfaceId: await eniOf(host(0)), PrivateIpAddress: ip });
    const associate = proxy.calls.find((c) => c.action === "AssociateAddress")!;
    expect(associate.params).toMatchObject({
      AllocationId: eip!.AllocationId,
      NetworkInterfaceId: await eniOf(host(0)),
      PrivateIpAddress: ip,
      AllowReassociation: "true",
    });
    expect(await p.publicAddress!(ip)).toBe(eip!.PublicIp);
    await expect(p.checkIP(ip, host(0))).resolves.toBeUndefined();
    const from = proxy.calls.length;
    await p.addSpecifiedIP(ip, host(0)); // the retry of an interrupted create
    expect(actionsSince(from, "AllocateAddress", "AssociateAddress")).toEqual([]);
  });

  it("moves the same Elastic IP with the address on failover, also off a terminated host", async () => {
    await p.addSpecifiedIP(ip, host(0));
    const [before] = await addresses();
    await p.moveIP(ip, host(0), host(1));
    expect(await secondaries(host(1))).toEqual([ip]);
    const [after, ...more] = await addresses();
    expect(more).toEqual([]);
    expect(after).toMatchObject({
      AllocationId: before!.AllocationId,
      PublicIp: before!.PublicIp,
      NetworkInterfaceId: await eniOf(host(1)),
      PrivateIpAddress: ip,
    });
    await ec2.send(new TerminateInstancesCommand({ InstanceIds: [host(1)] }));
    await p.moveIP(ip, host(1), host(2));
    expect(await addresses()).toEqual([
      expect.objectContaining({
        AllocationId: before!.AllocationId,
        NetworkInterfaceId: await eniOf(host(2)),
      }),
    ]);
    expect(actions("AllocateAddress")).toEqual(["AllocateAddress"]);
  });

  it("disassociates, then releases it when the address is removed (moto would release it still associated)", async () => {
    await p.addSpecifiedIP(ip, host(0));
    const from = proxy.calls.length;
    await p.removeIP(ip, host(0));
    expect(actionsSince(from, "DisassociateAddress", "UnassignPrivateIpAddresses", "ReleaseAddress")).toEqual(
      ["UnassignPrivateIpAddresses", "DisassociateAddress", "ReleaseAddress"],
    );
    expect(await addresses()).toEqual([]);
    expect(await secondaries(host(0))).toEqual([]);
    await p.removeIP(ip, host(0)); // a retried delete
    expect(await p.publicAddress!(ip)).toBeUndefined();
  });

  it("reports an association removed or moved by hand as drift, which the next placement repairs", async () => {
    await p.addSpecifiedIP(ip, host(0));
    const [eip] = await addresses();
    await ec2.send(new DisassociateAddressCommand({ AssociationId: eip!.AssociationId }));
    await expect(p.checkIP(ip, host(0))).rejects.toMatchObject({
      code: "DRIFT",
      message: expect.stringMatching(
        new RegExp(
          `does not leave from its public address: its Elastic IP ${eip!.AllocationId} \\(${eip!.PublicIp}\\) is associated with nothing; run pulumi up`,
        ),
      ),
    });
    expect(await p.publicAddress!(ip)).toBeUndefined();
    // What pulumi up does after refresh recorded the drift (EgressIpAssignment update: put it back).
    await make("allocate", "stack-1 urn:a").addSpecifiedIP(ip, host(0));
    await expect(p.checkIP(ip, host(0))).resolves.toBeUndefined();

    await associateByHand(eip!.AllocationId!, host(1), "10.0.1.99");
    await expect(p.checkIP(ip, host(0))).rejects.toThrow(
      new RegExp(`is associated with 10\\.0\\.1\\.99 on ${await eniOf(host(1))}`),
    );
    await p.addSpecifiedIP(ip, host(0));
    await expect(p.checkIP(ip, host(0))).resolves.toBeUndefined();
  });

  it("reports an Elastic IP released by hand as drift; the next placement allocates another", async () => {
    await p.addSpecifiedIP(ip, host(0));
    const [eip] = await addresses();
    await ec2.send(new DisassociateAddressCommand({ AssociationId: eip!.AssociationId }));
    await ec2.send(new ReleaseAddressCommand({ AllocationId: eip!.AllocationId }));
    await expect(p.checkIP(ip, host(0))).rejects.toThrow(
      /the Elastic IP this package allocated for it .* is gone/,
    );
    await p.addSpecifiedIP(ip, host(0));
    const [again] = await addresses();
    expect(again!.AllocationId).not.toBe(eip!.AllocationId);
    await expect(p.checkIP(ip, host(0))).resolves.toBeUndefined();
  });

  it("hands the Elastic IP over with the address (adopt: true); the old owner's delete leaves both", async () => {
    await p.addSpecifiedIP(ip, host(0));
    const [eip] = await addresses();
    await make("allocate", "stack-2 urn:b", true).addSpecifiedIP(ip, host(0));
    const [after, ...more] = await addresses();
    expect(more).toEqual([]);
    expect(after).toMatchObject({ AllocationId: eip!.AllocationId, PrivateIpAddress: ip });
    expect(tagsOf(after!)[eipOwnerTag]).toBe(ownerTagValue("stack-2 urn:b"));
    await p.removeIP(ip, host(0));
    expect(await secondaries(host(0))).toEqual([ip]);
    expect(await addresses()).toEqual([
      expect.objectContaining({ AllocationId: eip!.AllocationId, PrivateIpAddress: ip }),
    ]);
  });

  it("calls nothing about Elastic IPs without the setting, or for an IPv6 address", async () => {
    await make(undefined).addSpecifiedIP(ip, host(0));
    await make(undefined).checkIP(ip, host(0));
    await make(undefined).removeIP(ip, host(0));
    expect(await make(undefined).publicAddress!(ip)).toBeUndefined();
    expect(await p.publicAddress!("2600:1f18::10")).toBeUndefined();
    expect(actions("DescribeAddresses", "AllocateAddress", "AssociateAddress")).toEqual([]);
  });

  it("leaves no address behind when the Elastic IP quota is reached (fault-injected: moto lacks the quota)", async () => {
    proxy.inject({
      action: "AllocateAddress",
      code: "AddressLimitExceeded",
      message: "The maximum number of addresses has been reached.",
    });
    await expect(p.addSpecifiedIP(ip, host(0))).rejects.toThrow(
      /allocating an Elastic IP for 10\.0\.1\.10 in us-east-1 failed: AddressLimitExceeded: .*quota is reached.*elasticIps\.adopt/,
    );
    expect(await secondaries(host(0))).toEqual([]);
    expect(await addresses()).toEqual([]);
  });
});

describe("elasticIps.adopt (fault-injected: moto lacks an Elastic IP's association with a secondary private IP)", () => {
  it("associates the given Elastic IP, moves it on failover, and only disassociates it on removal", async () => {
    const id = await allocateByHand();
    const p = make({ adopt: { [ip]: id } });
    await p.addSpecifiedIP(ip, host(0));
    await p.moveIP(ip, host(0), host(1));
    expect(await addresses()).toEqual([
      expect.objectContaining({
        AllocationId: id,
        NetworkInterfaceId: await eniOf(host(1)),
        PrivateIpAddress: ip,
      }),
    ]);
    await p.removeIP(ip, host(1));
    const [left] = await addresses();
    expect(left).toMatchObject({ AllocationId: id });
    expect(left!.AssociationId).toBeUndefined();
    expect(actions("ReleaseAddress", "AllocateAddress")).toEqual([]);
  });

  it("allocates for the other addresses only with allocate: true", async () => {
    const id = await allocateByHand();
    await make({ adopt: { [ip]: id } }).addSpecifiedIP("10.0.1.11", host(0));
    expect(actions("DescribeAddresses", "AllocateAddress")).toEqual([]);
    await make({ adopt: { [ip]: id }, allocate: true }).addSpecifiedIP("10.0.1.12", host(0));
    expect((await addresses()).map((a) => a.PrivateIpAddress ?? null).sort()).toEqual(["10.0.1.12", null]);
  });

  it.each([
    [
      "an allocation that does not exist",
      async () => "eipalloc-0123456789abcdef0",
      /NOT_FOUND|does not exist in us-east-1/,
    ],
    [
      "an Elastic IP associated with another address",
      async () => {
        const id = await allocateByHand();
        await associateByHand(id, host(2), "10.0.1.77");
        return id;
      },
      /is associated with 10\.0\.1\.77 on eni-\w+, not with 10\.0\.1\.10; disassociate it there \(aws ec2 disassociate-address --association-id eipassoc-\w+\)/,
    ],
  ])("refuses %s, and leaves the private address off the host", async (_case, given, message) => {
    const p = make({ adopt: { [ip]: await given() } });
    await expect(p.addSpecifiedIP(ip, host(0))).rejects.toThrow(message);
    expect(await secondaries(host(0))).toEqual([]);
  });
});
