import {
  AssignPrivateIpAddressesCommand,
  CreateTagsCommand,
  TerminateInstancesCommand,
  UnassignPrivateIpAddressesCommand,
  type EC2Client,
} from "@aws-sdk/client-ec2";
import { ownerTagKey, ownerTagValue } from "../../provider/provisioners/aws/aws-provisioner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli";
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

interface Finding {
  kind: string;
  ip: string;
  expectedHost?: string;
  actualHost?: string;
  fix: string[];
}

describe("pulumi-egress-ipam check, against moto", () => {
  const h = Harness.create("cli-check", { env: motoCredentials });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  let moto: MotoServer;
  let ec2: EC2Client;
  let world: World;
  let placed: Record<string, string> = {};
  const check = (...args: string[]) => runCli(["check", "--stack", h.fqStackName, ...args], h.env);
  const eniOf = async (instanceId: string) =>
    (await interfacesIn(ec2, [world.subnetIds[zone]!])).find((n) => n.Attachment?.InstanceId === instanceId)!
      .NetworkInterfaceId!;
  /** Runs a printed `aws ec2 unassign-private-ip-addresses` fix through the SDK (no aws CLI here). */
  const unassignAsPrinted = async (command: string) => {
    const eni = /--network-interface-id (\S+)/.exec(command)![1]!;
    const ip = /--private-ip-addresses (\S+)/.exec(command)![1]!;
    expect(command).toContain(`--region ${region} --endpoint-url ${moto.endpoint}`);
    await ec2.send(
      new UnassignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, PrivateIpAddresses: [ip] }),
    );
  };

  /** Tags `to`'s interface with the owner record `from`'s interface has for `ip`. */
  const copyRecord = async (ip: string, from: string, to: string) => {
    const eni = (await interfacesIn(ec2, [world.subnetIds[zone]!])).find(
      (n) => n.Attachment?.InstanceId === from,
    )!;
    const Value = eni.TagSet!.find((t) => t.Key === ownerTagKey(ip))!.Value!;
    await ec2.send(
      new CreateTagsCommand({ Resources: [await eniOf(to)], Tags: [{ Key: ownerTagKey(ip), Value }] }),
    );
  };

  beforeAll(async () => {
    moto = await startMoto();
    ec2 = ec2Client(moto.endpoint, region);
    world = await createWorld(ec2, {
      region,
      subnets: { [zone]: subnet },
      instances: {
        [zone]: [
          { tags: egress, privateIp: "10.0.1.200" },
          { tags: egress, privateIp: "10.0.1.201" },
          { privateIp: "10.0.1.202" },
        ],
      },
    });
    await h.program(async () => {
      const pool = new IpPool("egress", { ranges: [{ subnet }], cloudReserved: "aws" });
      const provisioner = { kind: "aws" as const, region, endpoint: moto.endpoint, hostTags: egress };
      const out: Record<string, unknown> = {};
      for (const team of ["a", "b", "c"]) {
        const ip = new EgressIp(`team-${team}`, {
          pool,
          namespace: team,
          failureDomains: [zone],
          provisioner,
        });
        out[team] = ip.ips.apply((l) => l[0]);
      }
      return out;
    });
    const up = await h.up();
    placed = Object.fromEntries(Object.entries(up.outputs).map(([k, v]) => [k, v.value as string]));
  });
  afterAll(async () => {
    h.dispose();
    await moto?.stop();
  });

  // docs/operating.md: exit 2 for a usage error, one line on stderr naming it, nothing checked.
  it.each([
    [
      "an unknown stack",
      ["check", "--stack", "organization/no-such-project/test"],
      /cannot read stack "organization\/no-such-project\/test": .*pulumi stack ls/,
    ],
    ["a bad option", ["check", "--stack", "STACK", "--timeout", "soon"], /--timeout/],
    ["an unknown option", ["check", "--stack", "STACK", "--colour"], /unknown option '--colour'/],
  ])("%s: exit 2, one line on stderr naming it, nothing on stdout", async (_name, args, why) => {
    const run = await runCli(
      args.map((a) => (a === "STACK" ? h.fqStackName : a)),
      h.env,
    );
    expect(run.stdout).toBe("");
    expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(why);
    expect(run.code).toBe(2);
  });

  it("finds no drift right after up (exit 0)", async () => {
    expect(placed).toEqual({ a: "10.0.1.4", b: "10.0.1.5", c: "10.0.1.6" });
    const run = await check();
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /provisioner aws \(us-east-1 at http:\/\/127\.0\.0\.1:\d+\): 3 addresses on hosts in 10\.0\.1\.0\/24/,
    );
    expect(run.stdout).toContain("no drift: the hosts carry what state says");
  });

  it("finds one address removed (missing) and one moved (misplaced), exit 1; one somebody else added is in use by others", async () => {
    const hosts = await secondaryIps(ec2, [world.subnetIds[zone]!]);
    const hostOf = (ip: string) => Object.entries(hosts).find(([, ips]) => ips.includes(ip))![0];
    const [tagged1, tagged2, untagged] = world.instanceIds[zone]!;
    // Somebody else's: a secondary IP in the pool that no resource holds, untagged, on the untagged
    // instance (before issue 44, reported leaked with the command that removes it).
    await ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: await eniOf(untagged!),
        PrivateIpAddresses: ["10.0.1.100"],
      }),
    );
    // Missing: team a's address taken off its host.
    const hostA = hostOf("10.0.1.4");
    await ec2.send(
      new UnassignPrivateIpAddressesCommand({
        NetworkInterfaceId: await eniOf(hostA),
        PrivateIpAddresses: ["10.0.1.4"],
      }),
    );
    // Misplaced: team b's address where a move of its own killed after EC2 reassigned it leaves it:
    // on the other tagged instance, with its record there (the tag goes first). Moved there without
    // it, it is nobody's there and nothing is taken off (see below).
    const hostB = hostOf("10.0.1.5");
    const otherB = hostB === tagged1 ? tagged2! : tagged1!;
    await copyRecord("10.0.1.5", hostB, otherB);
    await ec2.send(
      new UnassignPrivateIpAddressesCommand({
        NetworkInterfaceId: await eniOf(hostB),
        PrivateIpAddresses: ["10.0.1.5"],
      }),
    );
    await ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: await eniOf(otherB),
        PrivateIpAddresses: ["10.0.1.5"],
      }),
    );

    const run = await check("--json");
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("");
    const doc = JSON.parse(run.stdout) as { drift: boolean; findings: Finding[] };
    expect(doc.drift).toBe(true);
    const untaggedEni = await eniOf(untagged!);
    const refreshUp = [`pulumi refresh --stack ${h.fqStackName}`, `pulumi up --stack ${h.fqStackName}`];
    expect(doc.findings).toEqual([
      {
        kind: "missing",
        ip: "10.0.1.4",
        expectedHost: hostA,
        urn: expect.stringMatching(/EgressIpAssignment::team-a-us-east-1a$/),
        fix: refreshUp,
      },
      {
        kind: "misplaced",
        ip: "10.0.1.5",
        expectedHost: hostB,
        actualHost: otherB,
        urn: expect.stringMatching(/EgressIpAssignment::team-b-us-east-1a$/),
        // Its own record there: refresh and up finish the move (before issue 54: its removal first).
        fix: refreshUp,
      },
    ]);
    const others = (JSON.parse(run.stdout) as { others: { ip: string; host: string; fix?: unknown }[] })
      .others;
    expect(others.filter((o) => o.ip === "10.0.1.100")).toEqual([{ ip: "10.0.1.100", host: untagged }]);
    expect(run.stdout).not.toContain(untaggedEni);

    const text = await check();
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/leaked \(on a host, inside a pool, held by nobody in state\): 0\n/);
    expect(text.stdout).toMatch(/in use by others \(.*\): 1\n {2}10\.0\.1\.100 {2}on i-/);
    expect(text.stdout).toMatch(/missing \(in state, on no host\): 1\n {2}10\.0\.1\.4 {2}state: on i-/);
    expect(text.stdout).toMatch(
      /misplaced \(on another host than state says\): 1\n {2}10\.0\.1\.5 {2}state: on i-\w+, really on i-/,
    );
    expect(text.stdout).toContain("2 findings: run the fix commands above");
  });

  it("is read only, and the fix commands it prints repair both: check then finds no drift", async () => {
    const before = await secondaryIps(ec2, [world.subnetIds[zone]!]);
    const doc = JSON.parse((await check("--json")).stdout) as { findings: Finding[] };
    expect(await secondaryIps(ec2, [world.subnetIds[zone]!])).toEqual(before);
    // Every cloud call first (as printed), then one refresh and one up cover every finding.
    for (const f of doc.findings)
      for (const cmd of f.fix.filter((c) => c.startsWith("aws "))) await unassignAsPrinted(cmd);
    await h.refresh();
    const up = await h.up();
    expect(changesOf(up.summary.resourceChanges)).toMatchObject({ update: 2 });
    const run = await check();
    expect(run.stdout).toContain("no drift");
    expect(run.code).toBe(0);
  });

  it("pulumi refresh --preview-only --expect-no-changes passes without drift, and after an address was taken off fails writing nothing (docs/operating.md)", async () => {
    await h.previewRefresh({ expectNoChanges: true });
    const hosts = await secondaryIps(ec2, [world.subnetIds[zone]!]);
    const hostA = Object.entries(hosts).find(([, ips]) => ips.includes(placed.a!))![0];
    await ec2.send(
      new UnassignPrivateIpAddressesCommand({
        NetworkInterfaceId: await eniOf(hostA),
        PrivateIpAddresses: [placed.a!],
      }),
    );
    const before = await h.resources();
    const failure = await h.previewRefresh({ expectNoChanges: true }).then(
      () => "passed",
      (err: Error) => err.message,
    );
    expect(failure).toMatch(
      /Command failed with exit code [1-9]\d*: pulumi refresh --preview-only --expect-no-changes/,
    );
    expect(failure).toContain("no changes were expected for refresh but changes were proposed");
    expect(await h.resources(), "state after the failed check").toEqual(before);
    // Without --preview-only the refresh fails the same way but records the drift first.
    await expect(h.refresh({ expectNoChanges: true })).rejects.toThrow(
      /no changes were expected for refresh/,
    );
    expect(await h.resources()).not.toEqual(before);
    // The next up puts the address back; the tests below start from a stack without drift.
    await h.up();
    expect((await check()).code).toBe(0);
  });

  it("an address somebody else put on the stack's instance (untagged, or tagged for another owner) is in use by others: no fix, exit 0", async () => {
    const hosts = await secondaryIps(ec2, [world.subnetIds[zone]!]);
    const hostC = Object.entries(hosts).find(([, ips]) => ips.includes(placed.c!))![0];
    const eni = await eniOf(hostC);
    // As the VPC CNI does with pod and warm IPs: on the stack's own instance, in the pool's subnet.
    await ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: eni,
        PrivateIpAddresses: ["10.0.1.77", "10.0.1.78"],
      }),
    );
    const otherOwner =
      "stack-0123456789abcdef01234567 urn:pulumi:prod::other::egress-ipam:index:EgressIp$x::y";
    await ec2.send(
      new CreateTagsCommand({
        Resources: [eni],
        Tags: [{ Key: ownerTagKey("10.0.1.78"), Value: ownerTagValue(otherOwner) }],
      }),
    );

    const run = await check("--json");
    expect(run.stderr).toBe("");
    const doc = JSON.parse(run.stdout) as {
      drift: boolean;
      findings: Finding[];
      others: { ip: string; host: string; fix?: unknown }[];
    };
    expect(doc.findings).toEqual([]);
    expect(doc.drift).toBe(false);
    expect(run.code).toBe(0);
    expect(doc.others.filter((o) => o.host === hostC).map((o) => o.ip)).toEqual(["10.0.1.77", "10.0.1.78"]);
    expect(doc.others.every((o) => o.fix === undefined)).toBe(true);

    const text = await check();
    expect(text.code).toBe(0);
    expect(text.stdout).not.toContain("unassign-private-ip-addresses");
    expect(text.stdout).toMatch(/leaked \(.*\): 0\n/);
    expect(text.stdout).toMatch(
      /in use by others .*\n( {2}.*\n)* {2}10\.0\.1\.77 {2}on i-\w+\n {2}10\.0\.1\.78 {2}on i-\w+ {2}\(recorded for sha256:/,
    );
    expect(text.stdout).toContain("no drift: the hosts carry what state says");
  });

  it("an address of the stack's whose resources left state (tagged for the stack) is still leaked, with the unassign call", async () => {
    const inState = await h.resources();
    const urnOf = (type: string) =>
      inState.find((r) => r.type.endsWith(type) && r.urn.endsWith("::team-c-us-east-1a"))!.urn;
    // As `pulumi state delete` leaves it: the address and its tag stay on the instance.
    await h.forget(urnOf("EgressIpAssignment"));
    await h.forget(urnOf("IpAllocation"));
    const hosts = await secondaryIps(ec2, [world.subnetIds[zone]!]);
    const hostC = Object.entries(hosts).find(([, ips]) => ips.includes(placed.c!))![0];

    const run = await check("--json");
    expect(run.code).toBe(1);
    const doc = JSON.parse(run.stdout) as { findings: Finding[]; others: { ip: string }[] };
    expect(doc.findings).toEqual([
      {
        kind: "leaked",
        ip: placed.c,
        actualHost: hostC,
        fix: [
          `aws ec2 unassign-private-ip-addresses --region ${region} --endpoint-url ${moto.endpoint} ` +
            `--network-interface-id ${await eniOf(hostC)} --private-ip-addresses ${placed.c}`,
        ],
      },
    ]);
    expect(doc.others.map((o) => o.ip)).toEqual(expect.arrayContaining(["10.0.1.77", "10.0.1.78"]));
  });

  // Before issue 54, both were misplaced with an `aws ec2 unassign-private-ip-addresses` of the
  // interface that has them now: the pod's, or the other stack's.
  it("an address of the stack's now on somebody else's interface (its host terminated and the address handed to a pod; taken over and moved by another stack) is misplaced with no removal, naming who holds it", async () => {
    const [, , untagged] = world.instanceIds[zone]!;
    const hosts = await secondaryIps(ec2, [world.subnetIds[zone]!]);
    const hostOf = (ip: string) => Object.entries(hosts).find(([, ips]) => ips.includes(ip))![0];
    const [hostA, hostB] = [hostOf(placed.a!), hostOf(placed.b!)];
    const podEni = await eniOf(untagged!);
    // Another stack adopted team b's address and moved it to the untagged instance (its tag goes first).
    const otherOwner =
      "stack-fedcba9876543210fedcba98 urn:pulumi:prod::other::egress-ipam:index:EgressIp$x::b";
    await ec2.send(
      new CreateTagsCommand({
        Resources: [podEni],
        Tags: [{ Key: ownerTagKey(placed.b!), Value: ownerTagValue(otherOwner) }],
      }),
    );
    await ec2.send(
      new UnassignPrivateIpAddressesCommand({
        NetworkInterfaceId: await eniOf(hostB),
        PrivateIpAddresses: [placed.b!],
      }),
    );
    await ec2.send(
      new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: podEni, PrivateIpAddresses: [placed.b!] }),
    );
    // Team a's host is terminated; the VPC CNI hands its address to a pod on the untagged instance.
    // (EC2 deletes a terminated instance's interface; moto keeps it, addresses and all.)
    const eniA = await eniOf(hostA);
    await ec2.send(new TerminateInstancesCommand({ InstanceIds: [hostA] }));
    await ec2.send(
      new UnassignPrivateIpAddressesCommand({ NetworkInterfaceId: eniA, PrivateIpAddresses: [placed.a!] }),
    );
    await ec2.send(
      new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: podEni, PrivateIpAddresses: [placed.a!] }),
    );

    const run = await check("--json");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(1);
    const doc = JSON.parse(run.stdout) as { findings: (Finding & { heldBy?: unknown })[] };
    const misplaced = doc.findings.filter((f) => f.kind === "misplaced");
    const refreshUp = [`pulumi refresh --stack ${h.fqStackName}`, `pulumi up --stack ${h.fqStackName}`];
    expect(misplaced).toEqual([
      {
        kind: "misplaced",
        ip: placed.a,
        expectedHost: hostA,
        actualHost: untagged,
        urn: expect.stringMatching(/EgressIpAssignment::team-a-us-east-1a$/),
        heldBy: { others: true },
        fix: refreshUp,
      },
      {
        kind: "misplaced",
        ip: placed.b,
        expectedHost: hostB,
        actualHost: untagged,
        urn: expect.stringMatching(/EgressIpAssignment::team-b-us-east-1a$/),
        heldBy: { others: true, recordedFor: [ownerTagValue(otherOwner)] },
        fix: refreshUp,
      },
    ]);
    expect(run.stdout).not.toContain(podEni);

    const text = await check();
    expect(text.code).toBe(1);
    expect(text.stdout).not.toContain(podEni);
    expect(text.stdout).toContain(
      `  ${placed.a}  state: on ${hostA}, really on ${untagged}, not the stack's: nobody is recorded for it there`,
    );
    expect(text.stdout).toContain(
      `  ${placed.b}  state: on ${hostB}, really on ${untagged}, not the stack's: recorded for ${ownerTagValue(otherOwner)}`,
    );
    expect(text.stdout).toMatch(
      /nothing is taken off: once its holder frees it, pulumi refresh and pulumi up place it again; or give it up/,
    );
    // Refresh and up while the pod's interface has them: up refuses (the engine stops at the first
    // refusal), naming the holder, and takes nothing from it.
    await h.refresh();
    const refused = String(await h.up().catch((e: Error) => e));
    expect(refused).toMatch(
      new RegExp(
        `\\[ADDRESS_IN_USE\\] cannot move (${placed.a}|${placed.b}) from .*: \\1 is used by ${podEni} \\(instance ${untagged}\\)`,
      ),
    );
    expect((await secondaryIps(ec2, [world.subnetIds[zone]!]))[untagged!]).toEqual(
      expect.arrayContaining([placed.a, placed.b]),
    );
  });

  it("exits 3 with one line naming the endpoint when the provisioner cannot be reached", async () => {
    await moto.stop();
    const run = await check();
    expect(run.code).toBe(3);
    expect(run.stdout).toBe("");
    expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(
      /^error: \[PROVISIONER_FAILED\] cannot ask the aws \(us-east-1 at http:\/\/127\.0\.0\.1:\d+\) provisioner what is on its hosts: .*check that its endpoint is reachable/,
    );
  });
});
