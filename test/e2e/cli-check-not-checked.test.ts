// `pulumi-egress-ipam check` on a stack it can check only in part: what it could not ask is said,
// "no drift" is never printed for it, and the run exits 3 (not checked), which wins over 1 (drift)
// as docs/cli.md says. The real CLI on a stack the real engine made against moto: one EgressIp on
// aws (asked), one on `none` (a kind that cannot list its hosts). The Kubernetes kinds without their
// kubeconfig or context are in test/e2e/cli-kube.cluster.test.ts.
import { UnassignPrivateIpAddressesCommand, type EC2Client } from "@aws-sdk/client-ec2";
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

const region = "us-east-1";
const zone = "us-east-1a";
const subnet = "10.0.1.0/24";
const egress = { role: "egress" };

describe("check of a stack it can check only in part, against moto", () => {
  const h = Harness.create("cli-check-part", { env: motoCredentials });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  let moto: MotoServer;
  let ec2: EC2Client;
  let world: World;
  const check = (...args: string[]) => runCli(["check", "--stack", h.fqStackName, ...args], h.env);
  const program = (withNone: boolean) => async () => {
    const aws = { kind: "aws" as const, region, endpoint: moto.endpoint, hostTags: egress };
    const pool = new IpPool("egress", { ranges: [{ subnet }], cloudReserved: "aws" });
    new EgressIp("team-a", { pool, namespace: "a", failureDomains: [zone], provisioner: aws });
    if (withNone) {
      const by = new IpPool("by-hand", { ranges: [{ subnet: "10.9.0.0/24" }] });
      new EgressIp("team-b", {
        pool: by,
        namespace: "b",
        failureDomains: ["zone-a"],
        provisioner: { kind: "none", hosts: { "zone-a": ["node-1"] } },
      });
    }
  };

  beforeAll(async () => {
    moto = await startMoto();
    ec2 = ec2Client(moto.endpoint, region);
    world = await createWorld(ec2, {
      region,
      subnets: { [zone]: subnet },
      instances: { [zone]: [{ tags: egress, privateIp: "10.0.1.200" }] },
    });
    await h.program(program(true));
    await h.up();
  });
  afterAll(async () => {
    h.dispose();
    await moto?.stop();
  });

  it("says what it did not check and exits 3, never 'no drift'", async () => {
    const run = await check();
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(
      /provisioner aws \(us-east-1 at [^)]*\): 1 address on hosts in 10\.0\.1\.0\/24/,
    );
    expect(run.stdout).toContain(
      "provisioner none: not checked: the none provisioner cannot list what is on its hosts",
    );
    expect(run.stdout).not.toContain("no drift");
    expect(run.stdout.trimEnd().split("\n").at(-1)).toBe(
      "not checked: 1 address of provisioner none (see above); the hosts that were asked carry what state says",
    );
    expect(run.code).toBe(3);
  });

  it("--json lists the addresses it did not check", async () => {
    const run = await check("--json");
    expect(run.code).toBe(3);
    const doc = JSON.parse(run.stdout) as { drift: boolean; unchecked: string[] };
    expect(doc.drift).toBe(false);
    expect(doc.unchecked).toEqual(["10.9.0.2"]);
  });

  it("with drift in what it asked: the findings and what it did not check, exit 3 (not checked wins over drift)", async () => {
    const eni = (await interfacesIn(ec2, [world.subnetIds[zone]!]))[0]!;
    await ec2.send(
      new UnassignPrivateIpAddressesCommand({
        NetworkInterfaceId: eni.NetworkInterfaceId,
        PrivateIpAddresses: ["10.0.1.4"],
      }),
    );
    const run = await check();
    expect(run.stdout).toContain("missing (in state, on no host): 1\n  10.0.1.4  state: on ");
    expect(run.stdout.trimEnd().split("\n").at(-1)).toBe(
      "1 finding: run the fix commands above; not checked: 1 address of provisioner none (see above)",
    );
    expect(run.code).toBe(3);
    const json = JSON.parse((await check("--json")).stdout) as { drift: boolean; unchecked: string[] };
    expect(json).toMatchObject({ drift: true, unchecked: ["10.9.0.2"] });
  });

  it("once every provisioner can be asked: exit 1 with drift, exit 0 without", async () => {
    await h.program(program(false));
    await h.up();
    const run = await check();
    expect(run.stdout.trimEnd().split("\n").at(-1)).toBe("1 finding: run the fix commands above");
    expect(run.code).toBe(1);
    await h.refresh();
    await h.up();
    const clean = await check();
    expect(clean.stdout.trimEnd().split("\n").at(-1)).toBe("no drift: the hosts carry what state says");
    expect(clean.code).toBe(0);
  });
});
