// An Elastic IP that another stack adopted with its address stays that stack's, wherever the address
// goes (issue 54, item 2), against moto through the fault proxy's eipPrivateIps rewrite (moto lacks
// an Elastic IP's association with a secondary private IP). Stack OLD places X with an allocated
// Elastic IP; stack NEW takes X over in place (`adopt: true`, `elasticIps.adopt` of that
// allocation); X's host is terminated and NEW's `up` moves X and its Elastic IP; OLD's `destroy`
// then leaves the Elastic IP where NEW put it.
import { DescribeAddressesCommand, TerminateInstancesCommand, type Address } from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eipPrivateIps, startFaultProxy, type FaultProxy } from "../support/ec2-fault-proxy";
import { Harness } from "../support/harness";
import { createWorld, ec2Client, motoCredentials, startMoto, type MotoServer } from "../support/moto";

type Pkg = typeof import("../../provider/index");
const region = "us-east-1";
const zone = "us-east-1a";
const subnet = "10.0.1.0/24";

describe("an adopted Elastic IP moved by its new owner, against moto (fault-injected: moto lacks an Elastic IP's association with a secondary private IP)", () => {
  const old = Harness.create("eip-old", { env: motoCredentials });
  const next = Harness.create("eip-new", { env: motoCredentials });
  let moto: MotoServer;
  let proxy: FaultProxy;
  let x = "";
  let allocation = "";
  const eips = async (): Promise<Address[]> =>
    (await ec2Client(proxy.endpoint, region).send(new DescribeAddressesCommand({}))).Addresses ?? [];

  beforeAll(async () => {
    moto = await startMoto();
    proxy = await startFaultProxy(moto.endpoint);
    proxy.rewrite(eipPrivateIps);
    await createWorld(ec2Client(moto.endpoint, region), {
      region,
      subnets: { [zone]: subnet },
      instances: {
        [zone]: [200, 201, 202].map((n) => ({ tags: { role: "egress" }, privateIp: `10.0.1.${n}` })),
      },
    });
  });
  afterAll(async () => {
    old.dispose();
    next.dispose();
    await proxy?.stop();
    await moto?.stop();
  });
  const provisioner = () => ({
    kind: "aws" as const,
    region,
    endpoint: proxy.endpoint,
    hostTags: { role: "egress" },
  });

  it("OLD places X with an allocated Elastic IP; NEW takes both over in place", async () => {
    await old.program(async () => {
      const { IpPool, EgressIp } = old.pkg<Pkg>("pulumi-egress-ipam");
      const pool = new IpPool("egress", { ranges: [{ subnet }], cloudReserved: "aws" });
      const e = new EgressIp("team", {
        pool,
        namespace: "team",
        failureDomains: [zone],
        provisioner: { ...provisioner(), elasticIps: "allocate" },
      });
      return { ips: e.ips };
    });
    x = ((await old.up()).outputs.ips!.value as string[])[0]!;
    allocation = (await eips()).find((a) => a.PrivateIpAddress === x)!.AllocationId!;
    await next.program(async () => {
      const { IpPool, EgressIp } = next.pkg<Pkg>("pulumi-egress-ipam");
      const pool = new IpPool("egress", { ranges: [{ subnet }], cloudReserved: "aws" });
      const e = new EgressIp("team", {
        pool,
        namespace: "team",
        failureDomains: [zone],
        ips: [x],
        adopt: true,
        provisioner: { ...provisioner(), elasticIps: { adopt: { [x]: allocation } } },
      });
      return { hosts: e.hosts, publicIps: e.publicIps };
    });
    await next.up();
    expect((await eips()).find((a) => a.AllocationId === allocation)?.PrivateIpAddress).toBe(x);
  });

  it("NEW moves X and its Elastic IP off a terminated host; OLD's destroy leaves the Elastic IP with X", async () => {
    const [host] = (await next.up()).outputs.hosts!.value as string[];
    await ec2Client(moto.endpoint, region).send(new TerminateInstancesCommand({ InstanceIds: [host!] }));
    const moved = await next.up();
    const [to] = moved.outputs.hosts!.value as string[];
    expect(to).not.toBe(host);
    const before = (await eips()).find((a) => a.AllocationId === allocation);
    expect(before).toMatchObject({ PrivateIpAddress: x });
    await old.destroy();
    const after = (await eips()).find((a) => a.AllocationId === allocation);
    expect(after).toMatchObject({ PrivateIpAddress: x, AssociationId: before!.AssociationId });
  });
});
