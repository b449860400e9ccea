// The aws provisioner with IPv6 egress addresses, against moto: an IPv6 address is an IPv6 address of
// the instance's primary interface (AssignIpv6Addresses / UnassignIpv6Addresses with the exact
// address), inside its subnet's IPv6 block, within the instance type's IPv6 limit. What moto does not
// emulate is injected by the fault proxy, in tests named "(fault-injected: moto lacks …)".
import {
  AssignIpv6AddressesCommand,
  AssociateSubnetCidrBlockCommand,
  AssociateVpcCidrBlockCommand,
  TerminateInstancesCommand,
  type EC2Client,
} from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { formatPrefix, parsePrefix } from "../../provider/allocator/prefix";
import {
  awsProvisioner,
  ownerTagKey,
  ownerTagValue,
  type AwsProvisioner,
  type AwsProvisionerOptions,
} from "../../provider/provisioners/aws/aws-provisioner";
import { startFaultProxy, type FaultProxy } from "../support/ec2-fault-proxy";
import {
  createWorld,
  ec2Client,
  interfacesIn,
  motoCredentials,
  startMoto,
  type MotoServer,
  type World,
} from "../support/moto";

const region = "us-east-1";
const [zoneA, zoneB, zoneC] = ["us-east-1a", "us-east-1b", "us-east-1c"];
const egress = { role: "egress" };
const fast: AwsProvisionerOptions = {
  retry: { attempts: 4, baseDelayMs: 5, maxDelayMs: 20, consistencyWindowMs: 150 },
  inventoryTtlMs: 0,
};

let moto: MotoServer;
let proxy: FaultProxy;
let ec2: EC2Client;
let world: World;
/** The IPv6 /64 of each zone's subnet (zone C's subnet has none). */
let v6: Record<string, string>;
let p: AwsProvisioner;

/** Host IDs: a1, a2 tagged m5.large (10 IPv6 per interface); b1 tagged t3.micro (2 IPv6), b2 tagged; c1 untagged. */
const host = (zone: string, i: number) => world.instanceIds[zone]![i]!;
/** The address `suffix` (hex) of a zone's IPv6 /64: `at(zoneA, "10")` is `<prefix>::10`. */
const at = (zone: string, suffix: string) => `${v6[zone]!.split("::/")[0]}::${suffix}`;
const eniOf = async (id: string) =>
  (await interfacesIn(ec2, Object.values(world.subnetIds))).find((n) => n.Attachment?.InstanceId === id)!;
/** The IPv6 addresses an instance's interfaces have, as moto lists them. */
const ipv6Of = async (id: string) =>
  ((await eniOf(id)).Ipv6Addresses ?? []).map((a) => a.Ipv6Address!).sort();
const tagsOf = async (id: string) =>
  Object.fromEntries(((await eniOf(id)).TagSet ?? []).map((t) => [t.Key, t.Value]));
const assignDirectly = async (id: string, ...ips: string[]) =>
  ec2.send(
    new AssignIpv6AddressesCommand({
      NetworkInterfaceId: (await eniOf(id)).NetworkInterfaceId,
      Ipv6Addresses: ips,
    }),
  );
const make = (hostTags: Record<string, string> = egress) =>
  awsProvisioner({ kind: "aws", region, endpoint: proxy.endpoint, hostTags }, fast);
/** The Ipv6Addresses.N parameters of the proxied calls of an action. */
const sent = (action: string) =>
  proxy.calls
    .filter((c) => c.action === action)
    .map((c) => Object.entries(c.params).flatMap(([k, v]) => (/^Ipv6Addresses\.\d+$/.test(k) ? [v] : [])));

/** Gives the VPC an IPv6 /56 (Amazon-provided) and each listed zone's subnet a /64 of it, in order. */
async function addIpv6(zones: string[]): Promise<Record<string, string>> {
  const vpc = await ec2.send(
    new AssociateVpcCidrBlockCommand({ VpcId: world.vpcId, AmazonProvidedIpv6CidrBlock: true }),
  );
  const block = parsePrefix(vpc.Ipv6CidrBlockAssociation!.Ipv6CidrBlock!);
  const out: Record<string, string> = {};
  for (const [i, zone] of zones.entries()) {
    const cidr = formatPrefix(6, block.network + (BigInt(i) << 64n), 64);
    await ec2.send(
      new AssociateSubnetCidrBlockCommand({ SubnetId: world.subnetIds[zone], Ipv6CidrBlock: cidr }),
    );
    out[zone] = cidr;
  }
  return out;
}

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
    subnets: { [zoneA]: "10.0.1.0/24", [zoneB]: "10.0.2.0/24", [zoneC]: "10.0.3.0/24" },
    instances: {
      [zoneA]: [{ tags: egress }, { tags: egress }],
      [zoneB]: [{ type: "t3.micro", tags: { ...egress, size: "small" } }, { tags: egress }],
      [zoneC]: [{ tags: egress }],
    },
  });
  v6 = await addIpv6([zoneA, zoneB]);
  proxy.clear();
  p = make();
});

describe("addSpecifiedIP with an IPv6 address", () => {
  it("assigns exactly that address to the host's primary interface, once", async () => {
    await p.addSpecifiedIP(at(zoneA, "10"), host(zoneA, 0));
    expect(await ipv6Of(host(zoneA, 0))).toEqual([at(zoneA, "10")]);
    expect(sent("AssignIpv6Addresses")).toEqual([[at(zoneA, "10")]]);
    expect(proxy.count("AssignPrivateIpAddresses")).toBe(0);
    await p.addSpecifiedIP(at(zoneA, "10"), host(zoneA, 0));
    expect(proxy.count("AssignIpv6Addresses")).toBe(1);
  });

  it("takes any spelling and works with the canonical one", async () => {
    const long = at(zoneA, "10").replace("::", ":0:0:0:");
    await p.addSpecifiedIP(long.toUpperCase(), host(zoneA, 0));
    expect(sent("AssignIpv6Addresses")).toEqual([[at(zoneA, "10")]]);
  });

  it("refuses an address outside the subnet's IPv6 block, naming both (moto would assign it)", async () => {
    await expect(p.addSpecifiedIP(at(zoneB, "10"), host(zoneA, 0))).rejects.toThrow(
      new RegExp(
        `cannot put ${at(zoneB, "10")} on host ${host(zoneA, 0)}.*subnet ${world.subnetIds[zoneA]} \\(10\\.0\\.1\\.0/24, ` +
          `${v6[zoneA]}, us-east-1a\\), which does not contain ${at(zoneB, "10")}; .*pool whose range lies in ${v6[zoneA]}`,
      ),
    );
    expect(proxy.count("AssignIpv6Addresses")).toBe(0);
  });

  it("refuses a host whose subnet has no IPv6 block", async () => {
    await expect(p.addSpecifiedIP(at(zoneA, "10"), host(zoneC, 0))).rejects.toThrow(
      /subnet subnet-\w+ \(10\.0\.3\.0\/24, us-east-1c\), which has no IPv6 CIDR block; associate an IPv6 block/,
    );
    expect(proxy.count("AssignIpv6Addresses")).toBe(0);
  });

  // The way out (a spare address of the pool in the EgressIp's ips) is the assignment provider's,
  // from the stack's checkpoint: taken-address-advice.test and aws-taken-address.test.
  it("refuses an address another interface has (moto has no in-use check), naming who has it", async () => {
    await assignDirectly(host(zoneA, 1), at(zoneA, "10"));
    await expect(p.addSpecifiedIP(at(zoneA, "10"), host(zoneA, 0))).rejects.toMatchObject({
      code: "ADDRESS_IN_USE",
      message: expect.stringMatching(
        new RegExp(`${at(zoneA, "10")} is already used by eni-\\w+ \\(instance ${host(zoneA, 1)}\\)`),
      ),
    });
    expect(proxy.count("AssignIpv6Addresses")).toBe(0);
  });

  it("explains a full interface naming the type's IPv6 limit (fault-injected: moto lacks per-type IPv6 limits)", async () => {
    // moto assigns a t3.micro any number of IPv6 addresses; EC2 refuses a third.
    await assignDirectly(host(zoneB, 0), at(zoneB, "20"), at(zoneB, "21"));
    proxy.inject({ action: "AssignIpv6Addresses", code: "InvalidInterface.IpAddressLimitExceeded" });
    await expect(p.addSpecifiedIP(at(zoneB, "10"), host(zoneB, 0))).rejects.toMatchObject({
      code: "HOST_UNAVAILABLE",
      message: expect.stringMatching(
        /InvalidInterface\.IpAddressLimitExceeded.*no room for another address on eni-\w+ \(a t3\.micro interface takes 2 IPv6 addresses\)/,
      ),
    });
  });
});

describe("removeIP, checkIP and moveIP with an IPv6 address", () => {
  beforeEach(() => p.addSpecifiedIP(at(zoneA, "10"), host(zoneA, 0)));

  it("unassigns exactly that address, and a second removal calls nothing", async () => {
    await assignDirectly(host(zoneA, 0), at(zoneA, "11"));
    proxy.clear();
    await p.removeIP(at(zoneA, "10"), host(zoneA, 0));
    expect(sent("UnassignIpv6Addresses")).toEqual([[at(zoneA, "10")]]);
    expect(await ipv6Of(host(zoneA, 0))).toEqual([at(zoneA, "11")]);
    proxy.clear();
    await p.removeIP(at(zoneA, "10"), host(zoneA, 0));
    expect(proxy.count("UnassignIpv6Addresses")).toBe(0);
  });

  it("checks that the host has it", async () => {
    await expect(p.checkIP(at(zoneA, "10"), host(zoneA, 0))).resolves.toBeUndefined();
    await expect(p.checkIP(at(zoneA, "10"), host(zoneA, 1))).rejects.toThrow(
      new RegExp(`egress IP ${at(zoneA, "10")} is not assigned to host ${host(zoneA, 1)}`),
    );
  });

  it("moves it: off the old interface first (EC2 cannot reassign IPv6), then onto the new one", async () => {
    proxy.clear();
    await p.moveIP(at(zoneA, "10"), host(zoneA, 0), host(zoneA, 1));
    const order = proxy.calls.map((c) => c.action).filter((a) => /Ipv6Addresses$/.test(a));
    expect(order).toEqual(["UnassignIpv6Addresses", "AssignIpv6Addresses"]);
    expect(await ipv6Of(host(zoneA, 0))).toEqual([]);
    expect(await ipv6Of(host(zoneA, 1))).toEqual([at(zoneA, "10")]);
  });

  it("puts it back on the old interface when the new one refuses it (fault-injected)", async () => {
    proxy.inject({ action: "AssignIpv6Addresses", code: "InvalidParameterValue", message: "refused" });
    await expect(p.moveIP(at(zoneA, "10"), host(zoneA, 0), host(zoneA, 1))).rejects.toThrow(
      /moving .* failed: InvalidParameterValue: refused/,
    );
    expect(await ipv6Of(host(zoneA, 0))).toEqual([at(zoneA, "10")]);
    expect(await ipv6Of(host(zoneA, 1))).toEqual([]);
  });

  it("moves it off a terminated host", async () => {
    await ec2.send(new TerminateInstancesCommand({ InstanceIds: [host(zoneA, 0)] }));
    await expect(p.checkIP(at(zoneA, "10"), host(zoneA, 0))).rejects.toThrow(/terminated/);
    await p.moveIP(at(zoneA, "10"), host(zoneA, 0), host(zoneA, 1));
    expect(await ipv6Of(host(zoneA, 1))).toEqual([at(zoneA, "10")]);
  });

  it("refuses to move it to a host of another subnet", async () => {
    await expect(p.moveIP(at(zoneA, "10"), host(zoneA, 0), host(zoneB, 1))).rejects.toThrow(
      new RegExp(`which does not contain ${at(zoneA, "10")}`),
    );
    expect(await ipv6Of(host(zoneA, 0))).toEqual([at(zoneA, "10")]);
  });
});

describe("findHostForIP with an IPv6 address", () => {
  it("plans a host of the subnet whose block has the address, with IPv6 room (per-type limit from DescribeInstanceTypes)", async () => {
    // b1 is a t3.micro (2 IPv6 addresses per interface) and the emptier; filled, b2 takes the address.
    expect(await make({ size: "small" }).findHostForIP!(at(zoneB, "10"), zoneB)).toBe(host(zoneB, 0));
    await assignDirectly(host(zoneB, 0), at(zoneB, "20"), at(zoneB, "21"));
    await expect(make({ size: "small" }).findHostForIP!(at(zoneB, "10"), zoneB)).rejects.toThrow(
      new RegExp(`${host(zoneB, 0)} .*: full \\(t3\\.micro: 2/2 IPv6\\)`),
    );
    await assignDirectly(host(zoneB, 1), at(zoneB, "22"));
    expect(await make().findHostForIP!(at(zoneB, "10"), zoneB)).toBe(host(zoneB, 1));
  });

  it("refuses a zone whose subnet has no IPv6 block, naming each instance's subnet", async () => {
    await expect(p.findHostForIP!(at(zoneA, "10"), zoneC)).rejects.toThrow(
      new RegExp(
        `no host in availability zone "us-east-1c" can take ${at(zoneA, "10")}: .*\\(10\\.0\\.3\\.0/24\\)`,
      ),
    );
  });
});

describe("usedAddresses and placements with IPv6 blocks", () => {
  it("lists the IPv6 addresses of every interface inside the IPv6 CIDRs (and IPv4 ones only for IPv4 CIDRs)", async () => {
    await assignDirectly(host(zoneA, 0), at(zoneA, "10"));
    await assignDirectly(host(zoneB, 1), at(zoneB, "10"));
    await p.addSpecifiedIP(at(zoneA, "9"), host(zoneA, 1));
    expect(await p.usedAddresses!([v6[zoneA]!])).toEqual([at(zoneA, "9"), at(zoneA, "10")]);
    expect(await p.usedAddresses!([v6[zoneA]!, v6[zoneB]!])).toEqual([
      at(zoneA, "9"),
      at(zoneA, "10"),
      at(zoneB, "10"),
    ]);
    expect((await p.usedAddresses!(["10.0.1.0/24"])).every((ip) => ip.startsWith("10.0.1."))).toBe(true);
  });

  it("places IPv6 addresses with their owner record, and names the unassign-ipv6-addresses call that removes one", async () => {
    const owner = p.forOwner("stack-1 urn:a");
    await owner.addSpecifiedIP(at(zoneA, "10"), host(zoneA, 0));
    const eni = (await eniOf(host(zoneA, 0))).NetworkInterfaceId!;
    expect(await tagsOf(host(zoneA, 0))).toMatchObject({
      [ownerTagKey(at(zoneA, "10"))]: ownerTagValue("stack-1 urn:a"),
    });
    const seen = await p.placements!([v6[zoneA]!]);
    expect(seen).toEqual([
      {
        ip: at(zoneA, "10"),
        host: host(zoneA, 0),
        aliases: [expect.stringMatching(/^ip-10-0-1-\d+\./)],
        removeCommand:
          `aws ec2 unassign-ipv6-addresses --region ${region} --endpoint-url ${proxy.endpoint} ` +
          `--network-interface-id ${eni} --ipv6-addresses ${at(zoneA, "10")}`,
        owners: [ownerTagValue("stack-1 urn:a")],
      },
    ]);
    await owner.removeIP(at(zoneA, "10"), host(zoneA, 0));
    expect(await tagsOf(host(zoneA, 0))).not.toHaveProperty(ownerTagKey(at(zoneA, "10")));
    expect(await p.placements!([v6[zoneA]!])).toEqual([]);
  });

  it("refuses another owner's IPv6 address, and moves none that another owner's tag claims", async () => {
    await p.forOwner("stack-2 urn:b").addSpecifiedIP(at(zoneA, "10"), host(zoneA, 0));
    await expect(p.forOwner("stack-1 urn:a").addSpecifiedIP(at(zoneA, "10"), host(zoneA, 0))).rejects.toThrow(
      /already an IPv6 address of its interface eni-\w+, recorded for another assignment/,
    );
    await expect(
      p.forOwner("stack-1 urn:a").moveIP(at(zoneA, "10"), host(zoneA, 0), host(zoneA, 1)),
    ).rejects.toThrow(/not this assignment's to move/);
    expect(await ipv6Of(host(zoneA, 0))).toEqual([at(zoneA, "10")]);
    await p.forOwner("stack-1 urn:a").removeIP(at(zoneA, "10"), host(zoneA, 0));
    expect(await ipv6Of(host(zoneA, 0))).toEqual([at(zoneA, "10")]);
  });
});

describe("IPv6 prefixes (fault-injected: moto lacks Ipv6Prefixes on interfaces)", () => {
  /** Adds a delegated /80 to an interface in every DescribeNetworkInterfaces and DescribeInstances answer. */
  const delegate = async (id: string, prefix: string) => {
    const eni = (await eniOf(id)).NetworkInterfaceId!;
    const tag = `<networkInterfaceId>${eni}</networkInterfaceId>`;
    const body = (xml: string) =>
      xml.replaceAll(
        tag,
        `${tag}<ipv6PrefixSet><item><ipv6Prefix>${prefix}</ipv6Prefix></item></ipv6PrefixSet>`,
      );
    proxy.rewrite({ action: "DescribeNetworkInterfaces", body });
    proxy.rewrite({ action: "DescribeInstances", body });
  };

  it("lists a delegated /80 as one block (2^48 addresses cannot be listed) and refuses an address inside it", async () => {
    const prefix = v6[zoneA]!.replace("/64", "/80");
    await delegate(host(zoneA, 1), prefix);
    expect(await p.usedAddresses!([v6[zoneA]!])).toEqual([prefix]);
    // A pool narrower than the prefix is wholly in use: the block is the pool's CIDR.
    const narrow = `${at(zoneA, "")}/120`;
    expect(await p.usedAddresses!([narrow])).toEqual([narrow]);
    await expect(p.addSpecifiedIP(at(zoneA, "10"), host(zoneA, 0))).rejects.toThrow(
      new RegExp(
        `${at(zoneA, "10")} is inside the prefix ${prefix} delegated to eni-\\w+ \\(instance ${host(zoneA, 1)}\\)`,
      ),
    );
    expect(proxy.count("AssignIpv6Addresses")).toBe(0);
  });

  it("counts a delegated IPv6 prefix as one of its interface's IPv6 slots when planning", async () => {
    // b1 (t3.micro: 2 IPv6) with one address and one prefix is full; b2 takes the address.
    await assignDirectly(host(zoneB, 0), at(zoneB, "20"));
    await delegate(host(zoneB, 0), `${v6[zoneB]!.split("::/")[0]}:0:1::/80`);
    await expect(make({ size: "small" }).findHostForIP!(at(zoneB, "10"), zoneB)).rejects.toThrow(
      /full \(t3\.micro: 2\/2 IPv6\)/,
    );
  });
});
