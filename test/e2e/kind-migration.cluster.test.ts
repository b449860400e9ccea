// Changing an EgressIp's provisioner kind keeps its addresses (the SDN → OVN move every OpenShift
// SDN cluster makes), with the real engine and the real kube-apiserver: ocp-static → ovn,
// ocp-dynamic (with its CidrAssignment) → ovn, none → ovn, ocp-static with cloud: aws → ovn. Preview shows the same address with its
// new placement; up puts it on the namespace's EgressIP object first, then takes it off the SDN
// objects (they share none, so the namespace is never without it); a second up changes nothing.
import type { EC2Client } from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";
import { kube, testKubeconfig } from "../support/kube";
import {
  createWorld,
  ec2Client,
  motoCredentials,
  secondaryIps,
  startMoto,
  type MotoServer,
  type World,
} from "../support/moto";
import {
  hostSubnetCidrs,
  hostSubnetIps,
  netNamespaceIps,
  sdnWorld,
  type SdnWorld,
  egressIpObjectIps,
} from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
const net = `10.27.${1 + Math.floor(Math.random() * 250)}`;
const assignable = "k8s.ovn.org/egress-assignable";
type Kind = "ocp-static" | "ocp-dynamic" | "none" | "ovn";

describe("an EgressIp switched to ovn keeps its addresses", () => {
  let w: SdnWorld<"n1" | "n2", "x" | "y" | "z">;
  const harnesses: Harness[] = [];
  const stack = (project: string) => {
    const h = Harness.create(project, { env: { KUBECONFIG: testKubeconfig() } });
    harnesses.push(h);
    return h;
  };
  const labelled = async (node: string) =>
    assignable in ((await kube().core.readNode({ name: node })).metadata?.labels ?? {});
  /** A pool, an EgressIp for `namespace` in zone a, and (cidrs) a CidrAssignment of the pool to n1. */
  const program =
    (h: Harness, kind: Kind, namespace: string, subnet: string, cidrs = false) =>
    async () => {
      const { IpPool, EgressIp, CidrAssignment } = h.pkg<Pkg>("pulumi-egress-ipam");
      const provisioner =
        kind === "none"
          ? { kind, hosts: { [w.zone("a")]: [w.node.n1] } }
          : { kind, nodeSelector: w.selector };
      const pool = new IpPool("egress", { ranges: [{ subnet }] });
      if (cidrs && kind !== "none") new CidrAssignment("cidrs", { pool, provisioner, hosts: [w.node.n1] });
      const e = new EgressIp("team", { pool, namespace, failureDomains: [w.zone("a")], provisioner });
      return { ips: e.ips, hosts: e.hosts };
    };
  const upOutputs = async (h: Harness) => {
    const up = await h.up();
    return { ips: up.outputs.ips!.value as string[], hosts: up.outputs.hosts!.value as string[] };
  };
  /** Switches to ovn: preview plans the same address, up moves it, a second up changes nothing. */
  const switchToOvn = async (h: Harness, namespace: string, subnet: string, ip: string, cidrs = false) => {
    await h.program(program(h, "ovn", namespace, subnet, cidrs));
    const preview = await h.preview();
    // A replacement (delete first, then create): the step that carries the new inputs has the address.
    const steps = preview.events
      .map((e) => e.resourcePreEvent?.metadata)
      .filter((m) => m?.urn.endsWith(`EgressIpAssignment::team-${w.zone("a")}`));
    // They write to no common object, so the new placement is made first: no window without it.
    expect(steps[0]?.op).toBe("create-replacement");
    expect([...new Set(steps.flatMap((m) => (m!.new?.inputs?.ip ? [m!.new.inputs.ip] : [])))]).toEqual([ip]);
    expect(preview.op("IpAllocation::team-" + w.zone("a"))).toBe("same");
    const after = await upOutputs(h);
    expect(after.ips).toEqual([ip]);
    expect(await egressIpObjectIps(namespace)).toEqual([ip]);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
    return after;
  };

  beforeAll(async () => {
    w = await sdnWorld({ n1: { zone: "a" }, n2: { zone: "a" } }, ["x", "y", "z"]);
  });
  afterAll(async () => {
    for (const h of harnesses) await h.destroy().catch(() => undefined);
    for (const h of harnesses) h.dispose();
    await w?.cleanup();
  });

  it("ocp-static → ovn: off the HostSubnet and the NetNamespace, onto the EgressIP object", async () => {
    const subnet = `${net}.0/28`;
    const h = stack("migrate-static");
    await h.program(program(h, "ocp-static", w.ns.x, subnet));
    const before = await upOutputs(h);
    const [ip] = before.ips as [string];
    expect(await netNamespaceIps(w.ns.x)).toEqual([ip]);
    expect(await hostSubnetIps(before.hosts[0]!)).toEqual([ip]);
    await switchToOvn(h, w.ns.x, subnet, ip);
    expect(await netNamespaceIps(w.ns.x)).toEqual([]);
    expect(await hostSubnetIps(before.hosts[0]!)).toEqual([]);
  });

  it("ocp-dynamic → ovn, with its CidrAssignment: egressCIDRs become the egress-assignable label", async () => {
    const subnet = `${net}.16/28`;
    const h = stack("migrate-dynamic");
    await h.program(program(h, "ocp-dynamic", w.ns.y, subnet, true));
    const [ip] = (await upOutputs(h)).ips as [string];
    expect(await netNamespaceIps(w.ns.y)).toEqual([ip]);
    expect(await hostSubnetCidrs(w.node.n1)).toEqual([subnet]);
    await switchToOvn(h, w.ns.y, subnet, ip, true);
    expect(await netNamespaceIps(w.ns.y)).toEqual([]);
    expect(await hostSubnetCidrs(w.node.n1)).toEqual([]);
    expect(await labelled(w.node.n1)).toBe(true);
  });

  it("none → ovn: the address the pool gave is the one the EgressIP object gets", async () => {
    const subnet = `${net}.32/28`;
    const h = stack("migrate-none");
    await h.program(program(h, "none", w.ns.z, subnet));
    const [ip] = (await upOutputs(h)).ips as [string];
    expect(await egressIpObjectIps(w.ns.z)).toEqual([]);
    await switchToOvn(h, w.ns.z, subnet, ip);
  });
});

// OpenShift SDN on AWS: ocp-static with cloud: aws made each address a secondary IP of its node's
// instance (moto's EC2 here). Under OVN-Kubernetes the cloud side is OVN's own (its
// cloud-network-config-controller assigns the address through a CloudPrivateIPConfig), so the switch
// takes the secondary IP off the instance first and then writes the EgressIP object: the old
// delete must not unassign what OVN has just assigned. The window is that one step per address.
describe("an EgressIp on ocp-static with cloud: aws switched to ovn (moto + kube-apiserver)", () => {
  const region = "us-east-1";
  const zone = "us-east-1a";
  let moto: MotoServer;
  let ec2: EC2Client;
  let aws: World;
  let w: SdnWorld<"n1" | "n2", "x">;
  let h: Harness | undefined;
  const onInstances = () => secondaryIps(ec2, [aws.subnetIds[zone]!]);

  beforeAll(async () => {
    moto = await startMoto();
    ec2 = ec2Client(moto.endpoint, region);
    aws = await createWorld(ec2, {
      region,
      subnets: { [zone]: "10.0.1.0/24" },
      instances: { [zone]: [{}, {}] },
    });
    const [i1, i2] = aws.instanceIds[zone]!;
    w = await sdnWorld(
      {
        n1: { zone: "a", providerID: `aws:///${zone}/${i1}` },
        n2: { zone: "a", providerID: `aws:///${zone}/${i2}` },
      },
      ["x"],
    );
  }, 120_000);
  afterAll(async () => {
    await h?.destroy().catch(() => undefined);
    h?.dispose();
    await w?.cleanup();
    await moto?.stop();
  });

  it("same address; off the instance, the HostSubnet and the NetNamespace; onto the EgressIP object", async () => {
    h = Harness.create("migrate-static-aws", { env: { ...motoCredentials, KUBECONFIG: testKubeconfig() } });
    const harness = h;
    const program = (kind: "ocp-static" | "ovn") => async () => {
      const { IpPool, EgressIp } = harness.pkg<Pkg>("pulumi-egress-ipam");
      const provisioner =
        kind === "ocp-static"
          ? {
              kind,
              nodeSelector: w.selector,
              cloud: { kind: "aws" as const, region, endpoint: moto.endpoint },
            }
          : { kind, nodeSelector: w.selector };
      const pool = new IpPool("egress", { ranges: [{ subnet: "10.0.1.0/24" }], cloudReserved: "aws" });
      const e = new EgressIp("team", { pool, namespace: w.ns.x, failureDomains: [w.zone("a")], provisioner });
      return { ips: e.ips, hosts: e.hosts };
    };
    await h.program(program("ocp-static"));
    const up = await h.up();
    const [ip] = up.outputs.ips!.value as [string];
    const [host] = up.outputs.hosts!.value as [string];
    const instance = host === w.node.n1 ? aws.instanceIds[zone]![0]! : aws.instanceIds[zone]![1]!;
    expect(await onInstances()).toEqual({ [instance]: [ip] });
    expect(await hostSubnetIps(host)).toEqual([ip]);

    await h.program(program("ovn"));
    const preview = await h.preview();
    expect(preview.op(`IpAllocation::team-${w.zone("a")}`)).toBe("same");
    const steps = preview.events
      .map((e) => e.resourcePreEvent?.metadata)
      .filter((m) => m?.urn.endsWith(`EgressIpAssignment::team-${w.zone("a")}`));
    // Delete first: the instance's secondary IP goes before OVN's cloud side could assign it.
    expect(steps.map((m) => m!.op)).toEqual(["delete-replaced", "replace", "create-replacement"]);
    expect([...new Set(steps.flatMap((m) => (m!.new?.inputs?.ip ? [m!.new.inputs.ip] : [])))]).toEqual([ip]);
    const after = await h.up();
    expect(after.outputs.ips!.value).toEqual([ip]);
    expect(await onInstances()).toEqual({});
    expect(await hostSubnetIps(host)).toEqual([]);
    expect(await netNamespaceIps(w.ns.x)).toEqual([]);
    expect(await egressIpObjectIps(w.ns.x)).toEqual([ip]);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });
});

// aws → cilium with cloud: aws (EKS): both make the address a secondary IP of an EC2 instance, here
// the same one (the gateway Node runs on the instance that had it). The new placement's create finds
// the address already there under its own owner tag and does nothing, so the old placement must go
// first: were it deleted after, it would take the address off the gateway's instance.
describe("an EgressIp on aws switched to cilium with cloud: aws (moto + kube-apiserver)", () => {
  const region = "us-east-1";
  const zone = "us-east-1a";
  let moto: MotoServer;
  let ec2: EC2Client;
  let aws: World;
  let w: SdnWorld<"n1", "x">;
  let h: Harness | undefined;
  const onInstances = () => secondaryIps(ec2, [aws.subnetIds[zone]!]);
  const zoneLabel = "egress-test/ec2-zone";

  beforeAll(async () => {
    moto = await startMoto();
    ec2 = ec2Client(moto.endpoint, region);
    aws = await createWorld(ec2, { region, subnets: { [zone]: "10.0.1.0/24" }, instances: { [zone]: [{}] } });
    const providerID = `aws:///${zone}/${aws.instanceIds[zone]![0]!}`;
    // The Node's zone label is the instance's availability zone, as on EKS: one failure domain, so
    // the assignment keeps its name and the switch is a replacement.
    const labels = { [zoneLabel]: zone };
    w = await sdnWorld({ n1: { zone: "a", hostSubnet: false, providerID, labels } }, ["x"], {
      netNamespaces: false,
    });
  }, 120_000);
  afterAll(async () => {
    await h?.destroy().catch(() => undefined);
    h?.dispose();
    await w?.cleanup();
    await moto?.stop();
  });

  it("deletes the aws placement first, so the address stays on the gateway's instance", async () => {
    h = Harness.create("migrate-aws-cilium", { env: { ...motoCredentials, KUBECONFIG: testKubeconfig() } });
    const harness = h;
    const cloud = { kind: "aws" as const, region, endpoint: moto.endpoint };
    const program = (kind: "aws" | "cilium") => async () => {
      const { IpPool, EgressIp } = harness.pkg<Pkg>("pulumi-egress-ipam");
      const pool = new IpPool("egress", { ranges: [{ subnet: "10.0.1.0/24" }], cloudReserved: "aws" });
      const e = new EgressIp("team", {
        pool,
        namespace: w.ns.x,
        failureDomains: [zone],
        provisioner: kind === "aws" ? cloud : { kind, nodeSelector: w.selector, zoneLabel, cloud },
      });
      return { ips: e.ips, hosts: e.hosts };
    };
    const instance = aws.instanceIds[zone]![0]!;
    await h.program(program("aws"));
    const [ip] = (await h.up()).outputs.ips!.value as [string];
    expect(await onInstances()).toEqual({ [instance]: [ip] });

    await h.program(program("cilium"));
    const preview = await h.preview();
    const steps = preview.events
      .map((e) => e.resourcePreEvent?.metadata)
      .filter((m) => m?.urn.endsWith(`EgressIpAssignment::team-${zone}`));
    expect(steps.map((m) => m!.op)).toEqual(["delete-replaced", "replace", "create-replacement"]);
    const after = await h.up();
    expect(after.outputs.ips!.value).toEqual([ip]);
    expect(after.outputs.hosts!.value).toEqual([w.node.n1]);
    expect(await onInstances()).toEqual({ [instance]: [ip] });
    await h.refresh();
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });
});
