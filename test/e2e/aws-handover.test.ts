// Who may take an EC2 secondary IP off, move it or put it back, with the real engine against moto:
// the interface's tag `egress-ipam/<ip>` names the owner, and every removal, move and put-back reads
// it immediately before acting. An adoption (`adopt: true`, from another stack or a renamed
// resource) moves the record; the former owner then takes nothing off and steals nothing back.
import {
  AssignPrivateIpAddressesCommand,
  CreateTagsCommand,
  DeleteTagsCommand,
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
const zone = "us-east-1a";
/** A tag value of an owner that is none of these stacks. */
const stranger = `sha256:${"0".repeat(40)}`;

describe("handing an EC2 secondary IP over between owners", () => {
  const harnesses: Harness[] = [];
  let moto: MotoServer;
  let ec2: EC2Client;
  let world: World;
  const a = () => world.instanceIds[zone]![0]!;
  const b = () => world.instanceIds[zone]![1]!;

  const stack = (name: string) => {
    const h = Harness.create(name, { env: motoCredentials });
    harnesses.push(h);
    return h;
  };
  /** A program of one EgressIpAssignment named `name`, placing `ip` on `host`. */
  const assignment =
    (h: Harness, name: string, ip: string, host: () => string, adopt?: boolean) => async () => {
      const { EgressIpAssignment } = h.pkg<Pkg>("pulumi-egress-ipam");
      const x = new EgressIpAssignment(name, {
        ip,
        provisioner: { kind: "aws", region, endpoint: moto.endpoint },
        failureDomain: zone,
        host: host(),
        ...(adopt === undefined ? {} : { adopt }),
      });
      return { host: x.host };
    };
  const eniOf = async (instance: string) =>
    (await interfacesIn(ec2, [world.subnetIds[zone]!])).find((n) => n.Attachment?.InstanceId === instance)!;
  const tagOf = async (instance: string, ip: string) =>
    ((await eniOf(instance)).TagSet ?? []).find((t) => t.Key === `egress-ipam/${ip}`)?.Value;
  const on = async (instance: string) => (await secondaryIps(ec2, [world.subnetIds[zone]!]))[instance] ?? [];
  const assignDirectly = async (instance: string, ip: string, tag?: string) => {
    const id = (await eniOf(instance)).NetworkInterfaceId!;
    await ec2.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: id, PrivateIpAddresses: [ip] }));
    if (tag)
      await ec2.send(
        new CreateTagsCommand({ Resources: [id], Tags: [{ Key: `egress-ipam/${ip}`, Value: tag }] }),
      );
  };
  const unassignDirectly = async (instance: string, ip: string, { untag = false } = {}) => {
    const id = (await eniOf(instance)).NetworkInterfaceId!;
    await ec2.send(
      new UnassignPrivateIpAddressesCommand({ NetworkInterfaceId: id, PrivateIpAddresses: [ip] }),
    );
    if (untag)
      await ec2.send(new DeleteTagsCommand({ Resources: [id], Tags: [{ Key: `egress-ipam/${ip}` }] }));
  };
  const assignmentState = async (h: Harness) =>
    (await h.resources()).find((r) => r.urn.endsWith("EgressIpAssignment::egress"))!;

  beforeAll(async () => {
    moto = await startMoto();
    ec2 = ec2Client(moto.endpoint, region);
    world = await createWorld(ec2, {
      region,
      subnets: { [zone]: "10.0.1.0/24" },
      instances: { [zone]: [{ privateIp: "10.0.1.200" }, { privateIp: "10.0.1.201" }] },
    });
  });
  afterAll(async () => {
    for (const h of harnesses) h.dispose();
    await moto?.stop();
  });

  it("another stack adopts the address: the old stack's destroy leaves it (and its record) to the new one", async () => {
    const ip = "10.0.1.50";
    const [old, neu] = [stack("handover-old"), stack("handover-new")];
    await old.program(assignment(old, "egress", ip, a));
    await old.up();
    const oldTag = await tagOf(a(), ip);
    expect(oldTag).toMatch(/^sha256:[0-9a-f]{40}$/);

    await neu.program(assignment(neu, "egress", ip, a, true));
    await neu.up();
    const newTag = await tagOf(a(), ip);
    expect(newTag).toMatch(/^sha256:[0-9a-f]{40}$/);
    expect(newTag).not.toBe(oldTag);

    await old.destroy();
    expect(await on(a())).toEqual([ip]);
    expect(await tagOf(a(), ip)).toBe(newTag);

    await neu.destroy();
    expect(await on(a())).toEqual([]);
    expect(await tagOf(a(), ip)).toBeUndefined();
  });

  it("a resource renamed with adopt: true keeps the address when the old name is deleted", async () => {
    const ip = "10.0.1.60";
    const h = stack("handover-rename");
    await h.program(assignment(h, "egress", ip, a));
    await h.up();
    const before = await tagOf(a(), ip);

    await h.program(assignment(h, "egress-renamed", ip, a, true));
    const up = await h.up();
    expect(changesOf(up.summary.resourceChanges)).toEqual({ create: 1, delete: 1 });
    expect(await on(a())).toEqual([ip]);
    const after = await tagOf(a(), ip);
    expect(after).toMatch(/^sha256:[0-9a-f]{40}$/);
    expect(after).not.toBe(before);

    await h.destroy();
    expect(await on(a())).toEqual([]);
    expect(await tagOf(a(), ip)).toBeUndefined();
  });

  it("a move is refused where the tag names another owner: on the old host (adopted away) and on the target", async () => {
    const ip = "10.0.1.70";
    const [old, neu] = [stack("move-old"), stack("move-new")];
    await old.program(assignment(old, "egress", ip, a));
    await old.up();
    await neu.program(assignment(neu, "egress", ip, a, true));
    await neu.up();
    const newTag = await tagOf(a(), ip);

    await old.program(assignment(old, "egress", ip, b));
    await expect(old.up()).rejects.toThrow(
      /cannot move 10\.0\.1\.70 .*eni-\w+ .*recorded for another assignment \(tag egress-ipam\/10\.0\.1\.70=sha256:[0-9a-f]{40}\)/,
    );
    expect(await on(a())).toEqual([ip]);
    expect(await on(b())).toEqual([]);
    expect(await tagOf(a(), ip)).toBe(newTag);
    await old.destroy();
    await neu.destroy();
    expect(await on(a())).toEqual([]);

    // The target itself has the address, recorded for somebody else (it left the old host meanwhile).
    const h = stack("move-target");
    await h.program(assignment(h, "egress", "10.0.1.71", a));
    await h.up();
    await unassignDirectly(a(), "10.0.1.71");
    await assignDirectly(b(), "10.0.1.71", stranger);
    await h.program(assignment(h, "egress", "10.0.1.71", b));
    await expect(h.up()).rejects.toThrow(
      new RegExp(
        `10\\.0\\.1\\.71 .*eni-\\w+.*recorded for another assignment \\(tag egress-ipam/10\\.0\\.1\\.71=${stranger}\\)`,
      ),
    );
    expect(await on(b())).toEqual(["10.0.1.71"]);
    expect(await tagOf(b(), "10.0.1.71")).toBe(stranger);
  });

  it.each([
    [
      "untagged (a VPC CNI pod IP)",
      "10.0.1.80",
      undefined,
      /not put there by this package \(no egress-ipam\/10\.0\.1\.80 tag\)/,
    ],
    [
      "tagged for another owner",
      "10.0.1.81",
      stranger,
      /recorded for another assignment \(tag egress-ipam\/10\.0\.1\.81=sha256:0{40}\)/,
    ],
  ])(
    "after drift, up refuses to put back an address somebody else has there now: %s",
    async (_, ip, tag, why) => {
      const h = stack(`drift-${ip.split(".")[3]}`);
      await h.program(assignment(h, "egress", ip, a));
      await h.up();
      // Taken off behind the stack's back (its record too, when somebody else tags it next); refresh records it missing.
      await unassignDirectly(a(), ip, { untag: tag === undefined });
      expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({ update: 1 });
      // Somebody else puts it on the same interface.
      await assignDirectly(a(), ip, tag);

      const failed = h.up();
      await expect(failed).rejects.toThrow(
        new RegExp(`cannot put ${ip.replaceAll(".", "\\.")} on host ${a()}`),
      );
      await expect(failed).rejects.toThrow(/eni-\w+/);
      await expect(failed).rejects.toThrow(why);
      expect(await tagOf(a(), ip)).toBe(tag);
      expect(await on(a())).toEqual([ip]);

      if (tag) {
        await h.destroy(); // another owner's: left alone
        expect(await on(a())).toEqual([ip]);
        expect(await tagOf(a(), ip)).toBe(tag);
      }
      await unassignDirectly(a(), ip, { untag: true });
      if (!tag) await h.destroy();
    },
  );

  it("refresh reports an address adopted by another stack as not this stack's, and up does not take it back", async () => {
    const ip = "10.0.1.90";
    const [old, neu] = [stack("refresh-old"), stack("refresh-new")];
    await old.program(assignment(old, "egress", ip, a));
    await old.up();
    await neu.program(assignment(neu, "egress", ip, a, true));
    await neu.up();
    const newTag = await tagOf(a(), ip);

    expect(changesOf((await old.refresh()).summary.resourceChanges)).toEqual({ update: 1 });
    const state = await assignmentState(old);
    expect(state.outputs).toMatchObject({ host: "", placement: { state: "missing", from: a() } });
    expect((state.outputs!.placement as { reason: string }).reason).toMatch(
      new RegExp(
        `10\\.0\\.1\\.90 .*recorded for another assignment \\(tag egress-ipam/10\\.0\\.1\\.90=${newTag}\\)`,
      ),
    );

    await expect(old.up()).rejects.toThrow(/cannot put 10\.0\.1\.90 on host/);
    expect(await on(a())).toEqual([ip]);
    expect(await tagOf(a(), ip)).toBe(newTag);

    await old.destroy();
    expect(await on(a())).toEqual([ip]);
    expect(await tagOf(a(), ip)).toBe(newTag);
    await neu.destroy();
    expect(await on(a())).toEqual([]);
  });
});
