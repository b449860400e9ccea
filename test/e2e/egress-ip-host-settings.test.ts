// A change of the settings that choose among hosts (none's `hosts`, aws's `hostTags`) is an update:
// an address stays on its host while the new settings still take it, keeping its Elastic IP, and
// moves (shown at preview) where they do not. Found by the explorer (docs/exploring.md): a
// `hostTags` edit that every host still matched replaced the placements, and every address got a
// new host and a new public address. aws runs against moto through the fault proxy's eipPrivateIps
// rewrite (moto lacks an Elastic IP's association with a secondary private IP).
import { DescribeAddressesCommand, type Address } from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eipPrivateIps, startFaultProxy, type FaultProxy } from "../support/ec2-fault-proxy";
import { changesOf, Harness } from "../support/harness";
import {
  createWorld,
  ec2Client,
  motoCredentials,
  startMoto,
  type MotoServer,
  type World,
} from "../support/moto";

type Pkg = typeof import("../../provider/index");

describe("none: a change of hosts", () => {
  const h = Harness.create("none-hosts");
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  const program = (hosts: Record<string, string[]>) => async () => {
    const pool = new IpPool("pool", { ranges: [{ subnet: "10.64.0.0/24" }] });
    const e = new EgressIp("team", {
      pool,
      namespace: "team",
      failureDomains: ["za", "zb"],
      provisioner: { kind: "none", hosts },
    });
    return { hosts: e.hosts, ips: e.ips };
  };
  afterAll(() => h.dispose());

  it("keeps each address on a host the new hosts still have, and moves only the one whose host left", async () => {
    await h.program(program({ za: ["a1"], zb: ["b1"] }));
    const first = await h.up();
    expect(first.outputs.hosts!.value).toEqual(["a1", "b1"]);
    await h.program(program({ za: ["a0", "a1"], zb: ["b2"] }));
    const preview = await h.preview();
    expect(preview.op("EgressIpAssignment::team-za")).toBe("update");
    expect(preview.planned("EgressIpAssignment::team-za")?.host).toBe("a1");
    expect(preview.op("EgressIpAssignment::team-zb")).toBe("update");
    expect(preview.planned("EgressIpAssignment::team-zb")?.host).toBe("b2");
    expect(changesOf(preview.changeSummary)).toEqual({ update: 2 });
    const up = await h.up();
    expect(up.outputs.hosts!.value).toEqual(["a1", "b2"]);
    expect(up.outputs.ips!.value).toEqual(first.outputs.ips!.value);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });
});

describe("aws: a change of hostTags, against moto (fault-injected: moto lacks an Elastic IP's association with a secondary private IP)", () => {
  const h = Harness.create("aws-host-tags", { env: motoCredentials });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  const region = "us-east-1";
  const zone = "us-east-1a";
  let moto: MotoServer;
  let proxy: FaultProxy;
  let world: World;
  let hostTags: Record<string, string> = { role: "egress" };
  const addresses = async (): Promise<Address[]> =>
    (await ec2Client(proxy.endpoint, region).send(new DescribeAddressesCommand({}))).Addresses ?? [];

  beforeAll(async () => {
    moto = await startMoto();
    proxy = await startFaultProxy(moto.endpoint);
    proxy.rewrite(eipPrivateIps);
    world = await createWorld(ec2Client(moto.endpoint, region), {
      region,
      subnets: { [zone]: "10.0.1.0/24" },
      instances: {
        [zone]: [
          { tags: { role: "egress", team: "t" }, privateIp: "10.0.1.200" },
          { tags: { role: "egress", team: "t" }, privateIp: "10.0.1.201" },
        ],
      },
    });
    await h.program(async () => {
      const pool = new IpPool("egress", { ranges: [{ subnet: "10.0.1.0/24" }], cloudReserved: "aws" });
      const e = new EgressIp("team", {
        pool,
        namespace: "team",
        failureDomains: [zone],
        provisioner: { kind: "aws", region, endpoint: proxy.endpoint, hostTags, elasticIps: "allocate" },
      });
      return { hosts: e.hosts, ips: e.ips, publicIps: e.publicIps };
    });
  });
  afterAll(async () => {
    h.dispose();
    await proxy?.stop();
    await moto?.stop();
  });

  it("keeps the address, its host and its Elastic IP when every host still matches; preview says update", async () => {
    const first = await h.up();
    const [host] = first.outputs.hosts!.value as string[];
    expect(world.instanceIds[zone]).toContain(host);
    const [publicIp] = first.outputs.publicIps!.value as string[];
    const eips = (await addresses()).map((a) => a.AllocationId).sort();
    hostTags = { role: "egress", team: "t" };
    const preview = await h.preview();
    expect(changesOf(preview.changeSummary)).toEqual({ update: 1 });
    expect(preview.planned("EgressIpAssignment::team-us-east-1a")).toMatchObject({ host, publicIp });
    const up = await h.up();
    expect(up.outputs.hosts!.value).toEqual([host]);
    expect(up.outputs.ips!.value).toEqual(first.outputs.ips!.value);
    expect(up.outputs.publicIps!.value).toEqual([publicIp]);
    expect((await addresses()).map((a) => a.AllocationId).sort()).toEqual(eips);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });
});
