import { AssignPrivateIpAddressesCommand, type EC2Client } from "@aws-sdk/client-ec2";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli";
import { Harness } from "../support/harness";
import {
  createWorld,
  ec2Client,
  interfacesIn,
  motoCredentials,
  startMoto,
  type MotoServer,
  type World,
} from "../support/moto";

type Pkg = typeof import("../../provider/index");

const typeOf = (kind: string) => `pulumi-nodejs:dynamic/egress-ipam:${kind}`;
/** Times of day differ from run to run: the same number of characters keeps the columns. */
const timeless = (text: string) =>
  text.replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/g, "YYYY-MM-DD hh:mm:ss UTC");

// `report` and `check` of a stack holding blocks, with the real engine: the program of
// test/e2e/prefix-allocation.test.ts (a /8 root with /16 environments, a child pool per environment
// with two /24s, an address, two IPv6 /64s of a /48).
describe("pulumi-egress-ipam report and check, on a stack holding blocks", () => {
  const h = Harness.create("cli-blocks");
  const { IpPool, IpAllocation, PrefixAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
  const cli = (...args: string[]) => runCli(args, h.env);
  const urn = (kind: string, name: string) => `urn:pulumi:test::cli-blocks::${typeOf(kind)}::${name}`;
  /** The pools' `free` outputs after refresh, by name. */
  const free: Record<string, string> = {};

  beforeAll(async () => {
    await h.program(async () => {
      const root = new IpPool("root", {
        ranges: [{ subnet: "10.0.0.0/8" }],
        strategy: "lowest-free",
        prefixLengths: { min: 16, max: 24, default: 16 },
      });
      for (const env of ["prod", "dev"]) {
        const block = new PrefixAllocation(env, { pool: root });
        const subnets = new IpPool(`${env}-subnets`, {
          ranges: [{ subnet: block.cidr }],
          strategy: "lowest-free",
          prefixLengths: { min: 24, max: 28, default: 24 },
        });
        for (const zone of ["a", "b"]) new PrefixAllocation(`${env}-${zone}`, { pool: subnets });
      }
      new IpAllocation("vip", { pool: root });
      const v6 = new IpPool("v6", { ranges: [{ subnet: "2001:db8::/48" }], strategy: "lowest-free" });
      for (const name of ["v6a", "v6b"]) new PrefixAllocation(name, { pool: v6, prefixLength: 64 });
    });
    await h.up();
    // Deployments are told apart by their start second (with a second of slack for clock skew):
    // a refresh in the same second as the last create would be named as the holders' deployment.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    await h.refresh();
    for (const r of await h.resources()) {
      if (r.type === typeOf("IpPool")) free[r.urn.split("::").pop()!] = String(r.outputs?.free);
    }
  });
  afterAll(() => h.dispose());

  it("report: each pool with its blocks, a pool made of a block under it, free as the pool's own free", async () => {
    const run = await cli("report", "--stack", h.fqStackName);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const expected = fs.readFileSync(path.join(__dirname, "fixtures", "cli-blocks-report.txt"), "utf8");
    expect(timeless(run.stdout)).toBe(expected);
    // The counts printed are the pools' `free` outputs after refresh.
    expect(free).toEqual({
      root: "16646140",
      "prod-subnets": "65021",
      "dev-subnets": "65021",
      v6: "1208888926126481755602942",
    });
    for (const [pool, n] of Object.entries(free)) {
      const line = run.stdout.split("\n").findIndex((l) => l.trim().startsWith(`pool ${pool} `));
      expect(
        run.stdout
          .split("\n")
          .slice(line)
          .find((l) => l.includes(" free ")),
      ).toContain(` free ${n} `);
    }
  });

  it("report --json: blocks with cidr and prefixLength, each child's parent, in tree order, free as the pools'", async () => {
    const run = await cli("report", "--stack", h.fqStackName, "--json");
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.pools.map((p: { name: string }) => p.name)).toEqual([
      "root",
      "prod-subnets",
      "dev-subnets",
      "v6",
    ]);
    for (const p of doc.pools) expect(p.free).toBe(free[p.name]);
    const summary = (p: { blocks: Record<string, unknown>[] }) =>
      p.blocks.map((b) => ({
        cidr: b.cidr,
        prefixLength: b.prefixLength,
        size: b.size,
        state: b.state,
        owner: b.owner,
        sinceVersion: b.sinceVersion,
        ...(b.pools ? { pools: b.pools } : {}),
      }));
    const [root, prod, dev, v6] = doc.pools;
    const held = (cidr: string, prefixLength: number, size: string, name: string, pools?: string) => ({
      cidr,
      prefixLength,
      size,
      state: "held",
      owner: urn("PrefixAllocation", name),
      sinceVersion: 1,
      ...(pools ? { pools: [{ pool: urn("IpPool", pools), name: pools }] } : {}),
    });
    // Blocks never hold a range's network address, gateway or (IPv4) broadcast address: best fit
    // takes the exact fits those leave, next to the start and the end of each subnet.
    expect(summary(root)).toEqual([
      held("10.1.0.0/16", 16, "65536", "prod", "prod-subnets"),
      held("10.254.0.0/16", 16, "65536", "dev", "dev-subnets"),
    ]);
    expect(summary(prod)).toEqual([
      held("10.1.1.0/24", 24, "256", "prod-a"),
      held("10.1.254.0/24", 24, "256", "prod-b"),
    ]);
    expect(summary(dev)).toEqual([
      held("10.254.1.0/24", 24, "256", "dev-a"),
      held("10.254.254.0/24", 24, "256", "dev-b"),
    ]);
    const big = "18446744073709551616";
    expect(summary(v6)).toEqual([
      held("2001:db8:0:1::/64", 64, big, "v6a"),
      held("2001:db8:0:2::/64", 64, big, "v6b"),
    ]);
    expect(root.holders.map((x: { ip: string; owner: string }) => [x.ip, x.owner])).toEqual([
      ["10.0.0.2", urn("IpAllocation", "vip")],
    ]);
    expect([root.parent, v6.parent]).toEqual([undefined, undefined]);
    expect(prod.parent).toEqual({
      pool: urn("IpPool", "root"),
      name: "root",
      block: "10.1.0.0/16",
      owner: urn("PrefixAllocation", "prod"),
    });
    expect(dev.parent).toMatchObject({ name: "root", block: "10.254.0.0/16" });
    expect(root).toMatchObject({
      size: "16777213",
      held: "131073",
      planned: "0",
      reserved: "0",
      excluded: "0",
    });
    expect(root.prefixLengths).toEqual({ min: 16, max: 24, default: 16 });
    expect(root.maps[0].lines.slice(2, 4)).toEqual([
      { kind: "row", first: "10.1.0.0", cells: "#".repeat(64) },
      {
        kind: "gap",
        first: "10.1.0.64",
        last: "10.1.255.191",
        free: "0",
        excluded: "0",
        outside: "0",
        held: "65408",
      },
    ]);
  });

  it("check: no block is drift or leaked, exit 0", async () => {
    const run = await cli("check", "--stack", h.fqStackName);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      [
        `stack ${h.fqStackName} has no EgressIpAssignment to check`,
        "",
        "leaked (on a host, inside a pool, held by nobody in state): 0",
        "",
        "missing (in state, on no host): 0",
        "",
        "misplaced (on another host than state says): 0",
        "",
        "in use by others (on a host, inside a pool, not this stack's: left alone): 0",
        "",
        "no drift: the hosts carry what state says",
        "",
      ].join("\n"),
    );
    const json = await cli("check", "--stack", h.fqStackName, "--json");
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      stack: h.fqStackName,
      provisioners: [],
      findings: [],
      others: [],
      publicAddresses: [],
      platform: [],
      unchecked: [],
      drift: false,
    });
  });
});

// A child pool made of a block of the VPC's pool, its egress IPs on moto's EC2: `check` asks the
// provisioner about the child's subnet only (the block), not the whole VPC range of its parent.
describe("pulumi-egress-ipam check, of a child pool's egress IPs against moto", () => {
  const region = "us-east-1";
  const zone = "us-east-1a";
  const egress = { role: "egress" };
  const h = Harness.create("cli-blocks-check", { env: motoCredentials });
  const { IpPool, PrefixAllocation, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  const check = (...args: string[]) => runCli(["check", "--stack", h.fqStackName, ...args], h.env);
  let moto: MotoServer;
  let ec2: EC2Client;
  let world: World;

  beforeAll(async () => {
    moto = await startMoto();
    ec2 = ec2Client(moto.endpoint, region);
    world = await createWorld(ec2, {
      region,
      subnets: { [zone]: "10.0.1.0/24" },
      instances: { [zone]: [{ tags: egress, privateIp: "10.0.1.200" }, { privateIp: "10.0.1.201" }] },
    });
    await h.program(async () => {
      const vpc = new IpPool("vpc", {
        ranges: [{ subnet: "10.0.0.0/16" }],
        prefixLengths: { min: 20, max: 28 },
      });
      const zoneA = new PrefixAllocation("zone-a", { pool: vpc, cidr: "10.0.1.0/24" });
      const pool = new IpPool("egress", { ranges: [{ subnet: zoneA.cidr }], cloudReserved: "aws" });
      const provisioner = { kind: "aws" as const, region, endpoint: moto.endpoint, hostTags: egress };
      const ip = new EgressIp("team-a", { pool, namespace: "a", failureDomains: [zone], provisioner });
      return { ip: ip.ips.apply((l) => l[0]) };
    });
    const up = await h.up();
    expect(up.outputs.ip?.value).toBe("10.0.1.4");
  });
  afterAll(async () => {
    h.dispose();
    await moto?.stop();
  });

  it("asks about the block only, finds no drift, and lists an address somebody else put in it once", async () => {
    const untagged = world.instanceIds[zone]![1]!;
    const eni = (await interfacesIn(ec2, [world.subnetIds[zone]!])).find(
      (n) => n.Attachment?.InstanceId === untagged,
    )!.NetworkInterfaceId!;
    await ec2.send(
      new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, PrivateIpAddresses: ["10.0.1.100"] }),
    );
    const run = await check("--json");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result.provisioners.map((p: { subnets: string[]; seen: number }) => [p.subnets, p.seen])).toEqual([
      [["10.0.1.0/24"], 2],
    ]);
    expect(result.findings).toEqual([]);
    expect(result.others).toEqual([{ ip: "10.0.1.100", host: untagged }]);
    const text = await check();
    expect(text.stdout).toMatch(
      /^provisioner aws \(us-east-1 at http:\/\/127\.0\.0\.1:\d+\): 2 addresses on hosts in 10\.0\.1\.0\/24\n/,
    );
    expect(text.stdout).toContain("no drift: the hosts carry what state says");
  });
});
