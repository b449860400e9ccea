// A planned address that somebody else took before it was placed: the EgressIp's allocation holds
// it (so the pool refuses to exclude it, and --replace plans it again), and every up fails on it.
// The error names a way out, and following it as written leads to a successful up and a clean
// preview: for an EgressIp over two zones, a dual-stack one, and one whose address somebody put on
// the very interface it was to go on (adopt). Real engine, moto.
import {
  AssignPrivateIpAddressesCommand,
  CreateNetworkInterfaceCommand,
  CreateTagsCommand,
  type EC2Client,
} from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";
import {
  createWorld,
  ec2Client,
  interfacesIn,
  motoCredentials,
  startMoto,
  type MotoServer,
} from "../support/moto";
import { addIpv6Blocks, dualStackCniConfig } from "../support/moto-ipv6";
import { followAdvice, type AdviceEdit } from "../support/follow-advice";

type Pkg = typeof import("../../provider/index");
const region = "us-east-1";

/** One way an address gets taken, and the advice the test follows. */
interface Case {
  name: string;
  /** Zone → subnet; the last zone's address is taken. */
  subnets: Record<string, string>;
  dual?: boolean;
  /** Another interface of the subnet takes it, or somebody puts it on the egress host's own interface. */
  taken: "by another interface" | "on the host's interface";
  follow: AdviceEdit["kind"];
}

const cases: Case[] = [
  {
    name: "two zones",
    subnets: { "us-east-1a": "10.0.1.0/24", "us-east-1b": "10.0.2.0/24" },
    taken: "by another interface",
    follow: "ips",
  },
  {
    name: "dual-stack",
    subnets: { "us-east-1a": "10.0.3.0/24" },
    dual: true,
    taken: "by another interface",
    follow: "ips",
  },
  {
    name: "adoptable",
    subnets: { "us-east-1a": "10.0.4.0/24" },
    taken: "on the host's interface",
    follow: "adopt",
  },
];

describe("an address taken between planning and placement", () => {
  let moto: MotoServer;
  let ec2: EC2Client;
  const harnesses: Harness[] = [];

  beforeAll(async () => {
    moto = await startMoto();
    ec2 = ec2Client(moto.endpoint, region);
  });
  afterAll(async () => {
    for (const h of harnesses) h.dispose();
    await moto?.stop();
  });

  it.each(cases)("$name: the advice, followed as written, leads to a successful up", async (c) => {
    const zones = Object.keys(c.subnets);
    const last = zones.at(-1)!;
    const tag = { role: `egress-${c.name.replace(/\W/g, "")}` };
    // The last zone's instance is not tagged yet: the first up allocates its address and cannot place it.
    const world = await createWorld(ec2, {
      region,
      subnets: c.subnets,
      instances: Object.fromEntries(zones.map((z) => [z, [{ tags: z === last ? {} : tag }]])),
    });
    const v6 = c.dual ? await addIpv6Blocks(ec2, world, zones) : {};
    const h = Harness.create(`aws-taken-${tag.role}`, { env: motoCredentials });
    harnesses.push(h);
    const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
    const program =
      (edit: Partial<{ ips: string[]; adopt: boolean; exclude: string[] }> = {}) =>
      async () => {
        const pools = Object.fromEntries(
          zones.map((z) => [
            z,
            new IpPool(`egress-${z}`, {
              ...(c.dual
                ? { cniConfig: dualStackCniConfig(c.subnets[z]!, v6[z]!) }
                : { ranges: [{ subnet: c.subnets[z]! }] }),
              cloudReserved: "aws",
              ...(edit.exclude ? { exclude: edit.exclude } : {}),
            }),
          ]),
        );
        const e = new EgressIp("team", {
          pool: pools,
          namespace: "team",
          failureDomains: zones,
          provisioner: { kind: "aws" as const, region, endpoint: moto.endpoint, hostTags: tag },
          ...(c.dual ? { families: "dual" as const } : {}),
          ...(edit.ips ? { ips: edit.ips } : {}),
          ...(edit.adopt ? { adopt: true } : {}),
        });
        return { ips: e.ips, hosts: e.hosts, addresses: e.addresses };
      };
    await h.program(program());
    await expect(h.up()).rejects.toThrow(/no eligible host in availability zone/);
    const held = (await h.resources()).find((r) => r.urn.endsWith(`IpAllocation::team-${last}`));
    const ip = held!.outputs!.ip as string;
    expect(ip).toMatch(/^10\.0\.\d\.\d+$/);

    const [host] = world.instanceIds[last]!;
    if (c.taken === "by another interface") {
      // An interface of somebody else's: a load balancer's, a Lambda's.
      await ec2.send(
        new CreateNetworkInterfaceCommand({ SubnetId: world.subnetIds[last], PrivateIpAddress: ip }),
      );
    } else {
      const eni = (await interfacesIn(ec2, [world.subnetIds[last]!])).find(
        (n) => n.Attachment?.InstanceId === host,
      )!;
      await ec2.send(
        new AssignPrivateIpAddressesCommand({
          NetworkInterfaceId: eni.NetworkInterfaceId,
          PrivateIpAddresses: [ip],
        }),
      );
    }
    await ec2.send(
      new CreateTagsCommand({
        Resources: [host!],
        Tags: Object.entries(tag).map(([Key, Value]) => ({ Key, Value })),
      }),
    );

    const failure = await h.up().then(
      () => "",
      (e: unknown) => String(e),
    );
    expect(failure).toContain(`cannot put ${ip} on host`);
    const edit = followAdvice(failure, "team", ip, c.follow);
    await h.program(
      program(
        edit.kind === "adopt" ? { adopt: true } : edit.kind === "ips" ? { ips: edit.ips } : { exclude: [ip] },
      ),
    );
    const up = await h.up();
    type Placed = Record<string, { ip: string; host: string }>;
    const placed = Object.values(up.outputs.addresses!.value as Record<string, Placed>);
    const all = placed.flatMap((f) => Object.values(f).map((a) => a.ip));
    // What the advice named is what is placed; adopted, the address stays where somebody put it.
    expect(all.sort()).toEqual(edit.kind === "ips" ? [...edit.ips].sort() : expect.arrayContaining([ip]));
    expect(placed.at(-1)!.ipv4!.host).toBe(host);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });
});
