// `pulumi-egress-ipam report` and `check` with Elastic IPs, against moto (through the fault proxy's
// eipPrivateIps rewrite: moto lacks an Elastic IP's association with a secondary private IP). One
// EgressIp gets an allocated Elastic IP, another an adopted one: report shows each public address
// next to its address; check lists them, and reports an association removed by hand and an adopted
// Elastic IP associated with another address as drift, with the fixes that repair them.
import {
  AllocateAddressCommand,
  AssignPrivateIpAddressesCommand,
  AssociateAddressCommand,
  DescribeAddressesCommand,
  DisassociateAddressCommand,
  type Address,
  type EC2Client,
} from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli";
import { eipPrivateIps, startFaultProxy, type FaultProxy } from "../support/ec2-fault-proxy";
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
/** team-a's address (an allocated Elastic IP), team-b's (an adopted one), somebody else's. */
const [ipA, ipB, foreign] = ["10.0.1.4", "10.0.1.5", "10.0.1.100"];

interface CheckJson {
  findings: { kind: string; ip: string; expectedHost?: string; reason?: string; fix: string[] }[];
  others: { ip: string; host: string }[];
  publicAddresses: { ip: string; host: string; publicIp: string; publicId?: string }[];
}

describe("report and check with Elastic IPs, against moto (fault-injected: moto lacks an Elastic IP's association with a secondary private IP)", () => {
  const h = Harness.create("cli-check-eip", { env: motoCredentials });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  let moto: MotoServer;
  let proxy: FaultProxy;
  let ec2: EC2Client;
  let world: World;
  let adopted: { id: string; publicIp: string };
  let hosts: Record<string, string> = {};
  const cli = (...args: string[]) => runCli([...args, "--stack", h.fqStackName], h.env);
  const checkJson = async () => {
    const run = await cli("check", "--json");
    return { code: run.code, doc: JSON.parse(run.stdout) as CheckJson };
  };
  /** Every Elastic IP through the proxy (as the provisioner reads them), by private address. */
  const eipOf = async (ip: string): Promise<Address | undefined> =>
    (await ec2Client(proxy.endpoint, region).send(new DescribeAddressesCommand({}))).Addresses?.find(
      (a) => a.PrivateIpAddress === ip,
    );
  const eniOf = async (instanceId: string) =>
    (await interfacesIn(ec2, [world.subnetIds[zone]!])).find((n) => n.Attachment?.InstanceId === instanceId)!
      .NetworkInterfaceId!;

  beforeAll(async () => {
    moto = await startMoto();
    proxy = await startFaultProxy(moto.endpoint);
    proxy.rewrite(eipPrivateIps);
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
    // Somebody else's address on the untagged instance: in use by others, listed once.
    await ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: await eniOf(world.instanceIds[zone]![2]!),
        PrivateIpAddresses: [foreign],
      }),
    );
    const made = await ec2.send(new AllocateAddressCommand({ Domain: "vpc" }));
    adopted = { id: made.AllocationId!, publicIp: made.PublicIp! };
    await h.program(async () => {
      const pool = new IpPool("egress", { ranges: [{ subnet }], cloudReserved: "aws" });
      const base = { kind: "aws" as const, region, endpoint: proxy.endpoint, hostTags: egress };
      const a = new EgressIp("team-a", {
        pool,
        namespace: "team-a",
        failureDomains: [zone],
        provisioner: { ...base, elasticIps: "allocate" },
      });
      const b = new EgressIp("team-b", {
        pool,
        namespace: "team-b",
        failureDomains: [zone],
        provisioner: { ...base, elasticIps: { adopt: { [ipB]: adopted.id } } },
      });
      return { a: a.hosts.apply((l) => l[0]), b: b.hosts.apply((l) => l[0]) };
    });
    const up = await h.up();
    hosts = { [ipA]: up.outputs.a!.value as string, [ipB]: up.outputs.b!.value as string };
  });
  afterAll(async () => {
    h.dispose();
    await proxy?.stop();
    await moto?.stop();
  });

  it("report shows each address's public address next to it", async () => {
    const run = await cli("report");
    expect(run.code).toBe(0);
    const allocated = (await eipOf(ipA))!.PublicIp!;
    expect(run.stdout).toMatch(/ADDRESS {3}PUBLIC +STATE/);
    expect(run.stdout).toMatch(
      new RegExp(`${ipA.replace(/\./g, "\\.")} +${allocated.replace(/\./g, "\\.")} +held`),
    );
    expect(run.stdout).toMatch(
      new RegExp(`${ipB.replace(/\./g, "\\.")} +${adopted.publicIp.replace(/\./g, "\\.")} +held`),
    );
    const json = JSON.parse((await cli("report", "--json")).stdout) as {
      pools: { holders: { ip: string; publicIp?: string }[] }[];
    };
    expect(json.pools[0]!.holders.map((x) => [x.ip, x.publicIp])).toEqual([
      [ipA, allocated],
      [ipB, adopted.publicIp],
    ]);
  });

  it("check lists each Elastic IP next to its address and finds no drift (exit 0)", async () => {
    const allocated = (await eipOf(ipA))!;
    const run = await cli("check");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("public addresses of the stack's addresses: 2");
    expect(run.stdout).toContain(
      `  ${ipA}  public ${allocated.PublicIp} (${allocated.AllocationId})  on ${hosts[ipA]}`,
    );
    expect(run.stdout).toContain(`  ${ipB}  public ${adopted.publicIp} (${adopted.id})  on ${hosts[ipB]}`);
    expect(run.stdout).toContain(
      "unassociated (on its host, not leaving from the public address its settings give it): 0",
    );
    expect(run.stdout).toContain("no drift: the hosts carry what state says");
    // Two provisioner configs (their elasticIps differ) over one subnet: somebody else's address once.
    const { doc } = await checkJson();
    expect(doc.others).toEqual([{ ip: foreign, host: world.instanceIds[zone]![2] }]);
    expect(doc.publicAddresses).toEqual([
      expect.objectContaining({ ip: ipA, publicIp: allocated.PublicIp, publicId: allocated.AllocationId }),
      expect.objectContaining({ ip: ipB, publicIp: adopted.publicIp, publicId: adopted.id }),
    ]);
  });

  it("reports an association removed by hand and an adopted Elastic IP moved to another address as drift; its fixes repair both", async () => {
    const allocated = (await eipOf(ipA))!;
    await ec2.send(new DisassociateAddressCommand({ AssociationId: allocated.AssociationId }));
    // The adopted one, on somebody else's address (through the proxy, which records what it names).
    const other = await eniOf(world.instanceIds[zone]![2]!);
    await ec2Client(proxy.endpoint, region).send(
      new AssociateAddressCommand({
        AllocationId: adopted.id,
        NetworkInterfaceId: other,
        PrivateIpAddress: foreign,
        AllowReassociation: true,
      }),
    );
    const moved = (await eipOf(foreign))!;
    const { code, doc } = await checkJson();
    expect(code).toBe(1);
    const refreshUp = [`pulumi refresh --stack ${h.fqStackName}`, `pulumi up --stack ${h.fqStackName}`];
    expect(doc.findings).toEqual([
      expect.objectContaining({
        kind: "unassociated",
        ip: ipA,
        expectedHost: hosts[ipA],
        reason: `its Elastic IP ${allocated.AllocationId} (${allocated.PublicIp}) is associated with nothing`,
        fix: refreshUp,
      }),
      expect.objectContaining({
        kind: "unassociated",
        ip: ipB,
        expectedHost: hosts[ipB],
        reason: `its Elastic IP ${adopted.id} (${adopted.publicIp}) is associated with ${foreign} on ${other}`,
        fix: [
          `aws ec2 disassociate-address --region ${region} --endpoint-url ${proxy.endpoint} ` +
            `--association-id ${moved.AssociationId}`,
          ...refreshUp,
        ],
      }),
    ]);
    expect(doc.publicAddresses.map((a) => a.ip)).toEqual([]);
    // The fixes as printed (the aws CLI call through the SDK), then refresh and up.
    await ec2.send(new DisassociateAddressCommand({ AssociationId: moved.AssociationId }));
    await h.refresh();
    await h.up();
    expect(await eipOf(ipA)).toMatchObject({ AllocationId: allocated.AllocationId });
    expect(await eipOf(ipB)).toMatchObject({ AllocationId: adopted.id });
    const after = await checkJson();
    expect(after.code).toBe(0);
    expect(after.doc.publicAddresses.map((a) => [a.ip, a.publicIp])).toEqual([
      [ipA, allocated.PublicIp],
      [ipB, adopted.publicIp],
    ]);
  });
});
