import {
  AssignPrivateIpAddressesCommand,
  CreateTagsCommand,
  StopInstancesCommand,
  TerminateInstancesCommand,
  UnassignPrivateIpAddressesCommand,
  type EC2Client,
} from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  awsProvisioner,
  ownerTagKey,
  ownerTagValue,
  type AwsProvisionerOptions,
} from "../../../provider/provisioners/aws/aws-provisioner";
import { createProvisioner } from "../../../provider/provisioners/factory/create-provisioner";
import type { AdoptPresent, EgressIPProvisioner } from "../../../provider/provisioners/egress-ip-provisioner";
import { provisionerConfigProblems } from "../../../provider/provisioners/config/provisioner-config";
import { startFaultProxy, type FaultProxy } from "../../support/ec2-fault-proxy";
import {
  createWorld,
  ec2Client,
  interfacesIn,
  motoCredentials,
  secondaryIps,
  startMoto,
  type MotoServer,
  type World,
} from "../../support/moto";
import { takenAddressOf } from "../../../provider/provisioners/taken-address";

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
let p: EgressIPProvisioner;

/** Host IDs: a1, a2 tagged m5.large, a3 untagged; b1 tagged t3.micro (2 IPs per interface), b2 tagged; c1 untagged. */
const host = (zone: string, i: number) => world.instanceIds[zone]![i]!;
const dnsName = (ip: string) => `ip-${ip.replaceAll(".", "-")}.ec2.internal`;
const secondaries = async (id: string) => (await secondaryIps(ec2, Object.values(world.subnetIds)))[id] ?? [];
const assignDirectly = (id: string, ip: string) =>
  interfacesIn(ec2, Object.values(world.subnetIds)).then((enis) => {
    const eni = enis.find((n) => n.Attachment?.InstanceId === id)!;
    return ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: eni.NetworkInterfaceId,
        PrivateIpAddresses: [ip],
      }),
    );
  });
const make = (hostTags: Record<string, string> = egress, options = fast) =>
  awsProvisioner({ kind: "aws", region, endpoint: proxy.endpoint, hostTags }, options);

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
      [zoneA]: [
        { tags: egress, privateIp: "10.0.1.200" },
        { tags: egress, privateIp: "10.0.1.201" },
        { privateIp: "10.0.1.202" },
      ],
      [zoneB]: [
        { type: "t3.micro", tags: { ...egress, size: "small" }, privateIp: "10.0.2.200" },
        { tags: egress, privateIp: "10.0.2.201" },
      ],
      [zoneC]: [{ privateIp: "10.0.3.200" }],
    },
  });
  proxy.clear();
  proxy.latencyMs = 0;
  p = make();
});

describe("config", () => {
  it.each([
    [{ kind: "aws", region }, []],
    [{ kind: "aws", region, endpoint: "http://127.0.0.1:5000", hostTags: { role: "egress" } }, []],
    [{ kind: "aws" }, ["region"]],
    [{ kind: "aws", region: "moon-1" }, ["region"]],
    [{ kind: "aws", region, endpoint: "ftp://x" }, ["endpoint"]],
    [{ kind: "aws", region, hostTags: { role: 1 } }, ["hostTags"]],
    [{ kind: "aws", region, subnet: "x" }, ["subnet"]],
    [{ kind: "aws", region, secretAccessKey: "x", accessKeyId: "y" }, ["secretAccessKey", "accessKeyId"]],
  ])("%j has problems with %j", (config, properties) => {
    expect(provisionerConfigProblems(config).map((x) => x.property)).toEqual(properties);
  });

  it("is built by createProvisioner", async () => {
    const viaFactory = createProvisioner({ kind: "aws", region, endpoint: proxy.endpoint, hostTags: egress });
    expect(await viaFactory.findHostForNewIP(zoneA)).toBe([host(zoneA, 0), host(zoneA, 1)].sort()[0]);
  });
});

describe("findHostForNewIP", () => {
  it("picks the least loaded tagged running instance of the zone", async () => {
    await assignDirectly(host(zoneA, 0), "10.0.1.50");
    expect(await p.findHostForNewIP(zoneA)).toBe(host(zoneA, 1));
  });

  it("spreads consecutive choices over the zone's hosts before they are placed", async () => {
    const picks = [];
    for (let i = 0; i < 4; i++) picks.push(await p.findHostForNewIP(zoneA));
    const [x, y] = [host(zoneA, 0), host(zoneA, 1)].sort();
    expect(picks).toEqual([x, y, x, y]);
  });

  it("counts every running instance when no hostTags are given", async () => {
    expect(await make({}).findHostForNewIP(zoneC)).toBe(host(zoneC, 0));
  });

  it("skips instances that are not running", async () => {
    await ec2.send(new StopInstancesCommand({ InstanceIds: [host(zoneA, 0)] }));
    expect(await p.findHostForNewIP(zoneA)).toBe(host(zoneA, 1));
  });

  it.each([
    [zoneC, /no eligible host in availability zone "us-east-1c".*role=egress/],
    ["us-east-1z", /no eligible host in availability zone "us-east-1z"/],
  ])("fails clearly for %s", async (zone, message) => {
    await expect(p.findHostForNewIP(zone)).rejects.toThrow(message);
  });

  it("skips full hosts (IPs per interface from DescribeInstanceTypes, primary included)", async () => {
    const small = make({ size: "small" });
    expect(await small.findHostForNewIP(zoneB)).toBe(host(zoneB, 0));
    await assignDirectly(host(zoneB, 0), "10.0.2.50");
    await expect(make({ size: "small" }).findHostForNewIP(zoneB)).rejects.toThrow(
      new RegExp(`no host in availability zone "us-east-1b" has room.*${host(zoneB, 0)} \\(t3.micro: 2/2\\)`),
    );
  });
});

describe("addSpecifiedIP", () => {
  it.each([
    ["instance ID", () => host(zoneA, 0)],
    ["private DNS name (the OpenShift node name)", () => dnsName("10.0.1.200")],
  ])("puts the IP on the host's primary interface, by %s", async (_how, name) => {
    await p.addSpecifiedIP("10.0.1.10", name());
    expect(await secondaries(host(zoneA, 0))).toEqual(["10.0.1.10"]);
    const assign = proxy.calls.find((c) => c.action === "AssignPrivateIpAddresses")!;
    expect(assign.params.AllowReassignment).not.toBe("true");
  });

  it("is idempotent", async () => {
    await p.addSpecifiedIP("10.0.1.10", host(zoneA, 0));
    proxy.clear();
    await p.addSpecifiedIP("10.0.1.10", host(zoneA, 0));
    expect(proxy.count("AssignPrivateIpAddresses")).toBe(0);
    expect(await secondaries(host(zoneA, 0))).toEqual(["10.0.1.10"]);
  });

  it.each([
    [
      "outside the interface's subnet",
      "10.0.2.10",
      () => host(zoneA, 0),
      /10\.0\.2\.10.*subnet-\w+ \(10\.0\.1\.0\/24, us-east-1a\)/,
    ],
    [
      "another instance's primary IP",
      "10.0.1.202",
      () => host(zoneA, 0),
      /10\.0\.1\.202 is already used by eni-\w+ \(instance i-/,
    ],
    [
      "on an unknown instance",
      "10.0.1.10",
      () => "i-0123456789abcdef0",
      /no EC2 instance "i-0123456789abcdef0" in us-east-1/,
    ],
    [
      "on an unknown node name",
      "10.0.1.10",
      () => "ip-10-9-9-9.ec2.internal",
      /no EC2 instance "ip-10-9-9-9.ec2.internal"/,
    ],
  ])("refuses an IP %s", async (_case, ip, name, message) => {
    await expect(p.addSpecifiedIP(ip, name())).rejects.toThrow(message);
    expect(proxy.count("AssignPrivateIpAddresses")).toBe(0);
  });

  it("refuses an IP that another host carries as a secondary (no silent reassignment)", async () => {
    await p.addSpecifiedIP("10.0.1.10", host(zoneA, 1));
    const refused: unknown = await p.addSpecifiedIP("10.0.1.10", host(zoneA, 0)).catch((e: unknown) => e);
    expect(String(refused)).toMatch(
      new RegExp(
        `10\\.0\\.1\\.10 is already used by eni-\\w+ \\(instance ${host(zoneA, 1)}\\)( "[^"]*")? in subnet subnet-\\w+$`,
      ),
    );
    // The way out is the EgressIpAssignment provider's to add (aws-taken-address runs it).
    expect(takenAddressOf(refused)).toEqual({ ip: "10.0.1.10", adoptable: false });
    expect(await secondaries(host(zoneA, 0))).toEqual([]);
  });

  it("refuses a terminated host", async () => {
    await ec2.send(new TerminateInstancesCommand({ InstanceIds: [host(zoneA, 0)] }));
    await expect(p.addSpecifiedIP("10.0.1.10", host(zoneA, 0))).rejects.toThrow(
      /is terminated.*running instances/,
    );
  });
});

describe("addRandomIP", () => {
  it("lets EC2 pick exactly one new address in the host's subnet", async () => {
    const ip = await p.addRandomIP(host(zoneB, 1));
    expect(ip).toMatch(/^10\.0\.2\.\d+$/);
    expect(await secondaries(host(zoneB, 1))).toEqual([ip]);
    const assign = proxy.calls.find((c) => c.action === "AssignPrivateIpAddresses")!;
    expect(assign.params.SecondaryPrivateIpAddressCount).toBe("1");
  });
});

describe("removeIP", () => {
  it("takes the IP off the host", async () => {
    await p.addSpecifiedIP("10.0.1.10", host(zoneA, 0));
    await p.addSpecifiedIP("10.0.1.11", host(zoneA, 0));
    await p.removeIP("10.0.1.10", host(zoneA, 0));
    expect(await secondaries(host(zoneA, 0))).toEqual(["10.0.1.11"]);
  });

  it.each([
    ["an IP the host does not have", "10.0.1.99", () => host(zoneA, 0)],
    ["an unknown instance", "10.0.1.10", () => "i-0123456789abcdef0"],
    ["an unknown node name", "10.0.1.10", () => "ip-10-9-9-9.ec2.internal"],
    ["a terminated instance", "10.0.1.10", () => host(zoneA, 2)],
  ])("is not an error for %s", async (_case, ip, name) => {
    await ec2.send(new TerminateInstancesCommand({ InstanceIds: [host(zoneA, 2)] }));
    await expect(p.removeIP(ip, name())).resolves.toBeUndefined();
    expect(proxy.count("UnassignPrivateIpAddresses")).toBe(0);
  });

  it("never removes a primary address", async () => {
    await p.removeIP("10.0.1.200", host(zoneA, 0));
    expect(proxy.count("UnassignPrivateIpAddresses")).toBe(0);
  });
});

describe("moveIP", () => {
  it("assigns on the new host with AllowReassignment and makes sure the old host no longer has it", async () => {
    await p.addSpecifiedIP("10.0.1.10", host(zoneA, 0));
    proxy.clear();
    await p.moveIP("10.0.1.10", host(zoneA, 0), dnsName("10.0.1.201"));
    const assign = proxy.calls.find((c) => c.action === "AssignPrivateIpAddresses")!;
    expect(assign.params.AllowReassignment).toBe("true");
    // moto ignores AllowReassignment and leaves the address on the old interface: the provisioner removes it.
    expect(proxy.count("UnassignPrivateIpAddresses")).toBe(1);
    expect(await secondaries(host(zoneA, 0))).toEqual([]);
    expect(await secondaries(host(zoneA, 1))).toEqual(["10.0.1.10"]);
  });

  it("moves off a host that has vanished", async () => {
    await p.addSpecifiedIP("10.0.1.10", host(zoneA, 0));
    await ec2.send(new TerminateInstancesCommand({ InstanceIds: [host(zoneA, 0)] }));
    await p.moveIP("10.0.1.10", host(zoneA, 0), host(zoneA, 1));
    await p.moveIP("10.0.1.11", "i-0123456789abcdef0", host(zoneA, 1));
    expect(await secondaries(host(zoneA, 1))).toEqual(["10.0.1.10", "10.0.1.11"]);
  });

  it.each([
    ["to a host in another subnet", "10.0.1.10", () => host(zoneB, 1), /does not contain 10\.0\.1\.10/],
    [
      "an IP that a third host uses",
      "10.0.1.202",
      () => host(zoneA, 1),
      /10\.0\.1\.202 is used by eni-\w+ \(instance i-\w+\), not by i-/,
    ],
  ])("refuses to move %s", async (_case, ip, to, message) => {
    await p.addSpecifiedIP("10.0.1.10", host(zoneA, 0));
    await expect(p.moveIP(ip, host(zoneA, 0), to())).rejects.toThrow(message);
    expect(await secondaries(host(zoneA, 0))).toEqual(["10.0.1.10"]);
  });
});

describe("checkIP", () => {
  beforeEach(() => p.addSpecifiedIP("10.0.1.10", host(zoneA, 0)));

  it.each([
    ["instance ID", () => host(zoneA, 0)],
    ["private DNS name", () => dnsName("10.0.1.200")],
  ])("passes when the IP is on the host, by %s", async (_how, name) => {
    await expect(p.checkIP("10.0.1.10", name())).resolves.toBeUndefined();
  });

  it.each([
    [
      "the IP is elsewhere",
      "10.0.1.10",
      () => host(zoneA, 1),
      /egress IP 10\.0\.1\.10 is not assigned to host i-\w+.*pulumi up/,
    ],
    [
      "the IP is nowhere",
      "10.0.1.99",
      () => host(zoneA, 0),
      /egress IP 10\.0\.1\.99 is not assigned to host i-/,
    ],
    [
      "the host is unknown",
      "10.0.1.10",
      () => "i-0123456789abcdef0",
      /10\.0\.1\.10 is not on host i-0123456789abcdef0/,
    ],
  ])("fails naming IP and host when %s", async (_case, ip, name, message) => {
    await expect(p.checkIP(ip, name())).rejects.toThrow(message);
  });

  it("fails when the host was terminated", async () => {
    await ec2.send(new TerminateInstancesCommand({ InstanceIds: [host(zoneA, 0)] }));
    await expect(p.checkIP("10.0.1.10", host(zoneA, 0))).rejects.toThrow(
      /10\.0\.1\.10 is not served by host i-\w+.*terminated/,
    );
  });
});

describe("assignCIDR", () => {
  it("is a no-op", async () => {
    await p.assignCIDR(host(zoneA, 0));
    expect(proxy.calls).toEqual([]);
  });
});

describe("usedAddresses", () => {
  it.each([
    [["10.0.1.0/24"], ["10.0.1.10", "10.0.1.200", "10.0.1.201", "10.0.1.202"]],
    [["10.0.1.192/28"], ["10.0.1.200", "10.0.1.201", "10.0.1.202"]],
    [
      ["10.0.0.0/16"],
      ["10.0.1.10", "10.0.1.200", "10.0.1.201", "10.0.1.202", "10.0.2.200", "10.0.2.201", "10.0.3.200"],
    ],
    [["10.0.2.0/25", "10.0.3.128/25"], ["10.0.3.200"]],
    [["192.168.0.0/24"], []],
  ])("lists every private IP, primary and secondary, in %j", async (cidrs, expected) => {
    await p.addSpecifiedIP("10.0.1.10", host(zoneA, 1));
    proxy.clear();
    expect(await p.usedAddresses!(cidrs)).toEqual(expected);
    // moto's addresses.private-ip-address filter sees only primary IPs: filter by subnet instead.
    const filters = proxy.calls.flatMap((c) =>
      Object.entries(c.params).filter(([k]) => /^Filter\.\d+\.Name$/.test(k)),
    );
    expect(filters.map(([, v]) => v)).not.toContain("addresses.private-ip-address");
  });
});

describe("pagination (moto answers in one page)", () => {
  it("reads every page of DescribeNetworkInterfaces, passing each NextToken on", async () => {
    const firstPage =
      `<DescribeNetworkInterfacesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">` +
      `<requestId>canned</requestId><networkInterfaceSet><item><networkInterfaceId>eni-canned</networkInterfaceId>` +
      `<subnetId>${world.subnetIds[zoneA]}</subnetId><privateIpAddressesSet><item>` +
      `<privateIpAddress>10.0.1.77</privateIpAddress><primary>true</primary></item></privateIpAddressesSet>` +
      `</item></networkInterfaceSet><nextToken>page-2</nextToken></DescribeNetworkInterfacesResponse>`;
    proxy.clear();
    proxy.answer({ action: "DescribeNetworkInterfaces", body: firstPage });
    expect(await p.usedAddresses!(["10.0.1.0/24"])).toEqual([
      "10.0.1.77",
      "10.0.1.200",
      "10.0.1.201",
      "10.0.1.202",
    ]);
    const pages = proxy.calls.filter((c) => c.action === "DescribeNetworkInterfaces");
    expect(pages.map((c) => c.params.NextToken)).toEqual([undefined, "page-2"]);
  });
});

describe("fault injection (what moto does not emulate)", () => {
  it("counts the addresses of an interface's Ipv4Prefixes as used and refuses to place one (VPC CNI prefix mode)", async () => {
    const eni = (await interfacesIn(ec2, [world.subnetIds[zoneA]!])).find(
      (n) => n.Attachment?.InstanceId === host(zoneA, 1),
    )!.NetworkInterfaceId!;
    const tag = `<networkInterfaceId>${eni}</networkInterfaceId>`;
    const body = (xml: string) =>
      xml.replaceAll(
        tag,
        `${tag}<ipv4PrefixSet><item><ipv4Prefix>10.0.1.16/28</ipv4Prefix></item></ipv4PrefixSet>`,
      );
    proxy.rewrite({ action: "DescribeNetworkInterfaces", body });
    const used = await p.usedAddresses!(["10.0.1.0/27"]);
    expect(used).toEqual(Array.from({ length: 16 }, (_, i) => `10.0.1.${16 + i}`));
    await expect(p.addSpecifiedIP("10.0.1.20", host(zoneA, 0))).rejects.toThrow(
      new RegExp(
        `10\\.0\\.1\\.20 is inside the prefix 10\\.0\\.1\\.16/28 delegated to ${eni} \\(instance ${host(zoneA, 1)}\\)`,
      ),
    );
    expect(proxy.count("AssignPrivateIpAddresses")).toBe(0);
  });

  it("retries RequestLimitExceeded throttling, then succeeds", async () => {
    proxy.inject({ action: "DescribeInstances", code: "RequestLimitExceeded", times: 2 });
    proxy.inject({ action: "AssignPrivateIpAddresses", code: "RequestLimitExceeded", times: 1 });
    await p.addSpecifiedIP("10.0.1.10", host(zoneA, 0));
    expect(proxy.count("DescribeInstances")).toBe(3);
    expect(proxy.count("AssignPrivateIpAddresses")).toBe(2);
    expect(await secondaries(host(zoneA, 0))).toEqual(["10.0.1.10"]);
  });

  it("gives up after the configured attempts of throttling", async () => {
    proxy.inject({ action: "DescribeInstances", code: "RequestLimitExceeded", times: 10 });
    await expect(p.checkIP("10.0.1.10", host(zoneA, 0))).rejects.toThrow(/RequestLimitExceeded/);
    expect(proxy.count("DescribeInstances")).toBe(4);
  });

  it("does not retry a client error", async () => {
    proxy.inject({ action: "AssignPrivateIpAddresses", code: "InvalidParameterValue", message: "bad input" });
    await expect(p.addSpecifiedIP("10.0.1.10", host(zoneA, 0))).rejects.toThrow(
      /assigning 10\.0\.1\.10 to eni-\w+ of host i-\w+ .* in subnet subnet-\w+ failed: InvalidParameterValue: bad input/,
    );
    expect(proxy.count("AssignPrivateIpAddresses")).toBe(1);
  });

  it("explains PrivateIpAddressLimitExceeded (moto has no per-type limit)", async () => {
    proxy.inject({ action: "AssignPrivateIpAddresses", code: "PrivateIpAddressLimitExceeded" });
    await expect(p.addSpecifiedIP("10.0.2.10", host(zoneB, 0))).rejects.toThrow(
      /PrivateIpAddressLimitExceeded.*host i-\w+ .*has no room for another address on eni-\w+ \(a t3\.micro interface takes 2 IPv4 addresses, the primary included\)/,
    );
    expect(proxy.count("AssignPrivateIpAddresses")).toBe(1);
  });

  it("explains InvalidIPAddress.InUse, EC2's own in-use check (moto has none)", async () => {
    proxy.inject({
      action: "AssignPrivateIpAddresses",
      code: "InvalidIPAddress.InUse",
      message: "Address 10.0.1.10 is in use",
    });
    const refused: unknown = await p.addSpecifiedIP("10.0.1.10", host(zoneA, 0)).catch((e: unknown) => e);
    expect(String(refused)).toMatch(
      /InvalidIPAddress\.InUse.*10\.0\.1\.10 was taken in subnet-\w+ meanwhile$/,
    );
    expect(takenAddressOf(refused)).toEqual({ ip: "10.0.1.10", adoptable: false });
  });

  it("retries NotFound right after a create (eventual consistency), then gives up on an unknown host", async () => {
    proxy.inject({ action: "DescribeInstances", code: "InvalidInstanceID.NotFound", times: 2 });
    await p.addSpecifiedIP("10.0.1.10", host(zoneA, 0));
    expect(proxy.count("DescribeInstances")).toBe(3);
    proxy.clear();
    // An instance that never appears: retried for the consistency window (its bound is tested with a
    // fake clock in aws-retry.test.ts), then reported as absent.
    await expect(p.checkIP("10.0.1.10", "i-0123456789abcdef0")).rejects.toThrow(
      /not on host i-0123456789abcdef0/,
    );
    expect(proxy.count("DescribeInstances")).toBeGreaterThan(1);
  });

  it("runs calls concurrently under latency", async () => {
    proxy.latencyMs = 400; // long enough that the four calls overlap even on a stalled machine
    proxy.clear();
    await Promise.all([10, 11, 12, 13].map((n, i) => p.addSpecifiedIP(`10.0.1.${n}`, host(zoneA, i % 2))));
    // The four assignments were in flight together, not one after the other.
    expect(proxy.maxInFlight).toBeGreaterThanOrEqual(4);
    expect([...(await secondaries(host(zoneA, 0))), ...(await secondaries(host(zoneA, 1)))].sort()).toEqual([
      "10.0.1.10",
      "10.0.1.11",
      "10.0.1.12",
      "10.0.1.13",
    ]);
  });

  it("honours the abort signal, also between retries", async () => {
    proxy.latencyMs = 300;
    await expect(p.checkIP("10.0.1.10", host(zoneA, 0), AbortSignal.timeout(50))).rejects.toThrow(
      /abort|timeout/i,
    );
    proxy.latencyMs = 0;
    proxy.clear();
    proxy.inject({ action: "DescribeInstances", code: "RequestLimitExceeded", times: 10 });
    const slow = make(egress, { retry: { attempts: 10, baseDelayMs: 60_000, maxDelayMs: 60_000 } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("stopped by the test")), 100);
    await expect(slow.checkIP("10.0.1.10", host(zoneA, 0), controller.signal)).rejects.toThrow(
      "stopped by the test",
    );
    // Nine retries were left; the abort ended the wait before any of the ones after it.
    expect(proxy.count("DescribeInstances")).toBeLessThan(10);
  });
});

describe("acting for an owner (forOwner): the interface's tag records who put an address there", () => {
  const ip = "10.0.1.50";
  const owned = (owner: string, adopt?: AdoptPresent) => make().forOwner(owner, adopt);
  const tagsOf = async (id: string) => {
    const enis = await interfacesIn(ec2, Object.values(world.subnetIds));
    const eni = enis.find((n) => n.Attachment?.InstanceId === id)!;
    return Object.fromEntries((eni.TagSet ?? []).map((t) => [t.Key, t.Value]));
  };

  it("tags the interface; the same owner's retry is not refused; removing takes the tag off", async () => {
    const a = owned("stack-1 urn:a");
    await a.addSpecifiedIP(ip, host(zoneA, 0));
    expect(await tagsOf(host(zoneA, 0))).toMatchObject({ [ownerTagKey(ip)]: ownerTagValue("stack-1 urn:a") });
    await a.addSpecifiedIP(ip, host(zoneA, 0)); // the retry of an interrupted create
    expect(await secondaries(host(zoneA, 0))).toEqual([ip]);
    await a.removeIP(ip, host(zoneA, 0));
    expect(await secondaries(host(zoneA, 0))).toEqual([]);
    expect(await tagsOf(host(zoneA, 0))).not.toHaveProperty(ownerTagKey(ip));
  });

  it("refuses an address already on the target that another owner's tag claims, unless adopted", async () => {
    await owned("stack-1 urn:a").addSpecifiedIP(ip, host(zoneA, 0));
    await expect(owned("stack-2 urn:b").addSpecifiedIP(ip, host(zoneA, 0))).rejects.toThrow(
      new RegExp(
        `already a secondary IP of its interface eni-\\w+, recorded for another assignment \\(tag egress-ipam/10\\.0\\.1\\.50=sha256:`,
      ),
    );
    await owned("stack-2 urn:b", true).addSpecifiedIP(ip, host(zoneA, 0));
    expect(await tagsOf(host(zoneA, 0))).toMatchObject({ [ownerTagKey(ip)]: ownerTagValue("stack-2 urn:b") });
  });

  it("refuses an address somebody put on the target without a tag (a VPC CNI warm IP); the plain provisioner still accepts it", async () => {
    await assignDirectly(host(zoneA, 0), ip);
    const refused: unknown = await owned("stack-1 urn:a")
      .addSpecifiedIP(ip, host(zoneA, 0))
      .catch((e: unknown) => e);
    expect(String(refused)).toMatch(/not put there by this package \(no egress-ipam\/10\.0\.1\.50 tag\)/);
    // Already where it would go: adopt: true (a create's way out) takes it over.
    expect(takenAddressOf(refused)).toEqual({ ip, adoptable: true });
    expect(await tagsOf(host(zoneA, 0))).not.toHaveProperty(ownerTagKey(ip));
    await p.addSpecifiedIP(ip, host(zoneA, 0)); // without an owner: as before
  });

  it('an update ("unrecorded") takes over nothing on EC2: neither an untagged address nor another owner\'s', async () => {
    await assignDirectly(host(zoneA, 0), ip);
    const refused: unknown = await owned("stack-1 urn:a", "unrecorded")
      .addSpecifiedIP(ip, host(zoneA, 0))
      .catch((e: unknown) => e);
    expect(String(refused)).toMatch(/not put there by this package \(no egress-ipam\/10\.0\.1\.50 tag\)/);
    // An update never adopts, so adopt: true is no way out of it.
    expect(takenAddressOf(refused)).toEqual({ ip, adoptable: false });
    await owned("stack-2 urn:b", true).addSpecifiedIP(ip, host(zoneA, 0));
    await expect(owned("stack-1 urn:a", "unrecorded").addSpecifiedIP(ip, host(zoneA, 0))).rejects.toThrow(
      /recorded for another assignment \(tag egress-ipam\/10\.0\.1\.50=sha256:/,
    );
    expect(await tagsOf(host(zoneA, 0))).toMatchObject({ [ownerTagKey(ip)]: ownerTagValue("stack-2 urn:b") });
  });

  // Before issue 54, both refused it as in use by the third host, so `check` could only print its removal.
  it("takes back an address an interrupted move of its own left on another host (its record there): put back or moved on", async () => {
    const a = owned("stack-1 urn:a");
    const [a1, a2, a3] = [host(zoneA, 0), host(zoneA, 1), host(zoneA, 2)];
    /** A move from a1 killed after EC2 reassigned the address to `to`: its record went first; state still names a1. */
    const leaveMidMove = async (to: string) => {
      const enis = await interfacesIn(ec2, Object.values(world.subnetIds));
      const eniOf = (id: string) => enis.find((n) => n.Attachment?.InstanceId === id)!.NetworkInterfaceId!;
      await ec2.send(
        new CreateTagsCommand({
          Resources: [eniOf(to)],
          Tags: [{ Key: ownerTagKey(ip), Value: ownerTagValue("stack-1 urn:a") }],
        }),
      );
      await ec2.send(
        new UnassignPrivateIpAddressesCommand({ NetworkInterfaceId: eniOf(a1), PrivateIpAddresses: [ip] }),
      );
      await assignDirectly(to, ip);
    };
    await a.addSpecifiedIP(ip, a1);
    await leaveMidMove(a2);
    await a.addSpecifiedIP(ip, a1); // refresh found it missing from a1; up puts it back there
    expect([await secondaries(a1), await secondaries(a2)]).toEqual([[ip], []]);
    expect(await tagsOf(a2)).not.toHaveProperty(ownerTagKey(ip));

    await leaveMidMove(a3);
    await a.moveIP(ip, a1, a2); // up planned another host: moved there from where it is
    expect([await secondaries(a1), await secondaries(a2), await secondaries(a3)]).toEqual([[], [ip], []]);
    expect(await tagsOf(a3)).not.toHaveProperty(ownerTagKey(ip));

    // Another owner's record there is still not this one's to take.
    await expect(owned("stack-2 urn:b").addSpecifiedIP(ip, a1)).rejects.toThrow(/already used by eni-/);
  });

  it("never moves an address another owner's tag claims; an untagged one (placed by an earlier version) moves", async () => {
    await owned("stack-2 urn:b").addSpecifiedIP(ip, host(zoneA, 0));
    await expect(owned("stack-1 urn:a").moveIP(ip, host(zoneA, 0), host(zoneA, 1))).rejects.toThrow(
      /has it recorded for another assignment \(tag egress-ipam\/10\.0\.1\.50=sha256:.*not this assignment's to move/,
    );
    expect(await secondaries(host(zoneA, 0))).toEqual([ip]);

    await assignDirectly(host(zoneA, 0), "10.0.1.51");
    await owned("stack-1 urn:a").moveIP("10.0.1.51", host(zoneA, 0), host(zoneA, 1));
    expect(await secondaries(host(zoneA, 1))).toEqual(["10.0.1.51"]);
    expect(await tagsOf(host(zoneA, 1))).toMatchObject({
      [ownerTagKey("10.0.1.51")]: ownerTagValue("stack-1 urn:a"),
    });
  });
});
