// EgressIp with the cilium provisioner: the real Pulumi engine against the real kube-apiserver
// (CiliumEgressGatewayPolicy objects of cilium.io/v2), and with cloud: aws against moto's EC2 too.
// Preview shows address and gateway Node per domain; up writes one policy per namespace whose
// selectors, destinations and gateways match; a NotReady gateway moves on the next up (with its
// secondary IP); refresh/up repair a policy edited behind our back; destroy leaves no policy; a
// foreign policy and a secondary IP that was there before are untouched.
import {
  AssignPrivateIpAddressesCommand,
  CreateTagsCommand,
  DescribeAddressesCommand,
  UnassignPrivateIpAddressesCommand,
  type EC2Client,
} from "@aws-sdk/client-ec2";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ownerTagKey } from "../../provider/provisioners/aws/aws-provisioner";
import { ciliumObjectName } from "../../provider/provisioners/kubernetes/cilium/cilium";
import { runCli } from "../support/cli";
import { changesOf, Harness } from "../support/harness";
import { kube, setNodeReady, testKubeconfig } from "../support/kube";
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
import { sdnWorld, type SdnWorld } from "../support/sdn-world";
import { denyWrites } from "../support/write-denial";

type Pkg = typeof import("../../provider/index");
const group = "cilium.io";
const version = "v2";
const plural = "ciliumegressgatewaypolicies";
interface Gateway {
  nodeSelector: { matchLabels: Record<string, string> };
  egressIP: string;
}
type Policy = k8s.KubernetesObject & {
  spec: {
    selectors: unknown;
    destinationCIDRs: string[];
    excludedCIDRs?: string[];
    egressGateway: Gateway;
    egressGateways: Gateway[];
  };
};

const custom = () => kube().config.makeApiClient(k8s.CustomObjectsApi);
const readPolicy = (name: string) =>
  custom().getClusterCustomObject({ group, version, plural, name }) as Promise<Policy>;
const policyExists = (name: string) =>
  readPolicy(name).then(
    () => true,
    (e: { code?: number }) => (e.code === 404 ? false : Promise.reject(e)),
  );
const gateway = (node: string, ip: string): Gateway => ({
  nodeSelector: { matchLabels: { "kubernetes.io/hostname": node } },
  egressIP: ip,
});
/** `[ip, node]` per gateway of the namespace's policy. */
const pins = async (namespace: string) =>
  (await readPolicy(ciliumObjectName(namespace))).spec.egressGateways.map((g) => [
    g.egressIP,
    g.nodeSelector.matchLabels["kubernetes.io/hostname"],
  ]);

describe("EgressIp with the cilium provisioner, against kube-apiserver", () => {
  const net = `10.34.${1 + Math.floor(Math.random() * 250)}`;
  const h = Harness.create("cilium", { env: { KUBECONFIG: testKubeconfig() } });
  let w: SdnWorld<"a1" | "a2" | "b1", "x">;
  const foreign = `foreign-${Date.now()}`;
  const foreignIp = `${net}.1`;
  let foreignBefore: Policy;

  beforeAll(async () => {
    w = await sdnWorld(
      {
        a1: { zone: "a", hostSubnet: false },
        a2: { zone: "a", hostSubnet: false },
        b1: { zone: "b", hostSubnet: false },
      },
      ["x"],
      { netNamespaces: false },
    );
    await custom().createClusterCustomObject({
      group,
      version,
      plural,
      body: {
        apiVersion: `${group}/${version}`,
        kind: "CiliumEgressGatewayPolicy",
        metadata: { name: foreign },
        spec: {
          selectors: [{ podSelector: { matchLabels: { app: "other" } } }],
          destinationCIDRs: ["0.0.0.0/0"],
          egressGateway: gateway(w.node.a1, foreignIp),
        },
      },
    });
    foreignBefore = await readPolicy(foreign);
  });
  afterAll(async () => {
    await h.destroy().catch(() => undefined);
    h.dispose();
    await custom()
      .deleteClusterCustomObject({ group, version, plural, name: foreign })
      .catch(() => undefined);
    await w?.cleanup();
  });

  /**
   * The stack's program; `second`: another EgressIp of the same namespace, with these destinations;
   * `destinations`: the first one's.
   */
  const program =
    (second?: string[], destinations = ["0.0.0.0/0"]) =>
    async () => {
      const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
      const pool = new IpPool("egress", { ranges: [{ subnet: `${net}.0/28`, gateway: `${net}.0` }] });
      const e = new EgressIp("team", {
        pool,
        namespace: w.ns.x,
        failureDomains: [w.zone("a"), w.zone("b")],
        provisioner: {
          kind: "cilium",
          nodeSelector: w.selector,
          destinations,
          excluded: ["192.168.0.0/16"],
        },
      });
      if (second) {
        new EgressIp("team-partner", {
          pool,
          namespace: w.ns.x,
          failureDomains: [w.zone("a")],
          provisioner: { kind: "cilium", nodeSelector: w.selector, destinations: second },
        });
      }
      return { ips: e.ips, hosts: e.hosts };
    };
  const planned: { ip: string; host: string }[] = [];

  it("previews address and gateway per domain; up writes the policy as planned; a second preview is empty", async () => {
    await h.program(program());
    const preview = await h.preview();
    for (const d of [w.zone("a"), w.zone("b")])
      planned.push({
        ip: preview.planned(`IpAllocation::team-${d}`)?.ip as string,
        host: preview.planned(`EgressIpAssignment::team-${d}`)?.host as string,
      });
    expect(planned.map((p) => p.ip)).not.toContain(foreignIp);
    expect([w.node.a1, w.node.a2]).toContain(planned[0]!.host);
    expect(planned[1]!.host).toBe(w.node.b1);
    const up = await h.up();
    expect(up.outputs.ips!.value).toEqual(planned.map((p) => p.ip));
    expect(up.outputs.hosts!.value).toEqual(planned.map((p) => p.host));
    const policy = await readPolicy(ciliumObjectName(w.ns.x));
    expect(policy.metadata?.labels?.["app.kubernetes.io/managed-by"]).toBe("pulumi-egress-ipam");
    const gateways = planned.map((p) => gateway(p.host, p.ip));
    expect(policy.spec).toEqual({
      selectors: [{ podSelector: { matchLabels: { "io.kubernetes.pod.namespace": w.ns.x } } }],
      destinationCIDRs: ["0.0.0.0/0"],
      excludedCIDRs: ["192.168.0.0/16"],
      egressGateway: expect.anything(),
      egressGateways: expect.arrayContaining(gateways),
    });
    expect(policy.spec.egressGateways).toHaveLength(2);
    // The assignments are placed in parallel, so either address may be the first gateway; the
    // singular egressGateway repeats whichever is.
    expect(policy.spec.egressGateway).toEqual(policy.spec.egressGateways[0]);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });

  it("a NotReady gateway: the next preview shows the move to another Node of its domain, up makes it", async () => {
    const [a] = planned;
    const other = a!.host === w.node.a1 ? w.node.a2 : w.node.a1;
    await setNodeReady(a!.host, false);
    try {
      const preview = await h.preview();
      expect(preview.planned(`EgressIpAssignment::team-${w.zone("a")}`)?.host).toBe(other);
      expect(preview.op(`IpAllocation::team-${w.zone("a")}`)).toBe("same");
      await h.up();
      expect(await pins(w.ns.x)).toContainEqual([a!.ip, other]);
      expect(changesOf((await h.preview()).changeSummary)).toEqual({});
    } finally {
      await setNodeReady(a!.host, true);
    }
  });

  it("refresh finds a policy edited behind the stack's back, and up writes it back", async () => {
    await custom().patchClusterCustomObject(
      {
        group,
        version,
        plural,
        name: ciliumObjectName(w.ns.x),
        body: { spec: { destinationCIDRs: ["10.0.0.0/8"] } },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    expect(changesOf((await h.refresh()).summary.resourceChanges).update).toBeGreaterThan(0);
    await h.up();
    expect((await readPolicy(ciliumObjectName(w.ns.x))).spec.destinationCIDRs).toEqual(["0.0.0.0/0"]);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });

  it("two EgressIps of one namespace with different destinations: preview refuses, naming both; the policy is untouched", async () => {
    const before = await readPolicy(ciliumObjectName(w.ns.x));
    await h.program(program(["10.0.0.0/8"]));
    try {
      await expect(h.preview()).rejects.toThrow(
        /EgressIp team-partner .*destinations 10\.0\.0\.0\/8.*EgressIp team .*destinations 0\.0\.0\.0\/0 excluding 192\.168\.0\.0\/16|EgressIp team .*destinations 0\.0\.0\.0\/0 excluding 192\.168\.0\.0\/16.*EgressIp team-partner .*destinations 10\.0\.0\.0\/8/,
      );
    } finally {
      await h.program(program());
    }
    expect((await readPolicy(ciliumObjectName(w.ns.x))).spec).toEqual(before.spec);
  });

  it("one EgressIp may change its policy's destinations; not while a gateway there is another stack's", async () => {
    const name = ciliumObjectName(w.ns.x);
    const before = await readPolicy(name);
    await h.program(program(undefined, ["10.0.0.0/8"]));
    try {
      // A provisioner setting changed: the assignments are replaced, the policy rewritten.
      expect(changesOf((await h.preview()).changeSummary)).not.toEqual({});
      // As another stack sharing the namespace's policy leaves it: one gateway recorded for it.
      const record = JSON.parse(before.metadata!.annotations!["egress-ipam/owners"]!);
      const other = "stack-000000000000000000000000 urn:pulumi:prod::other::x";
      record[planned[1]!.ip] = [other];
      await custom().patchClusterCustomObject(
        {
          group,
          version,
          plural,
          name,
          body: { metadata: { annotations: { "egress-ipam/owners": JSON.stringify(record) } } },
        },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
      await expect(h.preview()).rejects.toThrow(
        /EgressIp team asks for destinations 10\.0\.0\.0\/8 excluding 192\.168\.0\.0\/16 .*sends destinations 0\.0\.0\.0\/0 excluding 192\.168\.0\.0\/16 through gateways of another stack \(stack-000000000000000000000000 .*take the other stacks' EgressIps of namespace /,
      );
    } finally {
      await custom().patchClusterCustomObject(
        {
          group,
          version,
          plural,
          name,
          body: {
            metadata: {
              annotations: { "egress-ipam/owners": before.metadata!.annotations!["egress-ipam/owners"] },
            },
          },
        },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
      await h.program(program());
    }
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });

  it("destroy leaves no policy of ours, and the foreign one as it was", async () => {
    await h.destroy();
    expect(await policyExists(ciliumObjectName(w.ns.x))).toBe(false);
    expect((await readPolicy(foreign)).spec).toEqual(foreignBefore.spec);
  });
});

describe("cilium with cloud: aws (moto + kube-apiserver): the EKS gateway", () => {
  const region = "us-east-1";
  const zone = "us-east-1a";
  let moto: MotoServer;
  let ec2: EC2Client;
  let aws: World;
  let w: SdnWorld<"n1" | "n2", "x">;
  let h: Harness | undefined;
  const onInstances = () => secondaryIps(ec2, [aws.subnetIds[zone]!]);
  const preexisting = "10.0.1.200";

  beforeAll(async () => {
    moto = await startMoto();
    ec2 = ec2Client(moto.endpoint, region);
    aws = await createWorld(ec2, {
      region,
      subnets: { [zone]: "10.0.1.0/24" },
      instances: { [zone]: [{}, {}] },
    });
    const [i1, i2] = aws.instanceIds[zone]!;
    // A secondary IP somebody else put on the second instance.
    const eni = (await interfacesIn(ec2, [aws.subnetIds[zone]!])).find(
      (n) => n.Attachment?.InstanceId === i2,
    )!;
    await ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: eni.NetworkInterfaceId,
        PrivateIpAddresses: [preexisting],
      }),
    );
    w = await sdnWorld(
      {
        n1: { zone: "a", hostSubnet: false, providerID: `aws:///${zone}/${i1}` },
        n2: { zone: "a", hostSubnet: false, providerID: `aws:///${zone}/${i2}` },
      },
      ["x"],
      { netNamespaces: false },
    );
  }, 120_000);
  afterAll(async () => {
    await h?.destroy().catch(() => undefined);
    h?.dispose();
    await w?.cleanup();
    await moto?.stop();
  });

  it("the secondary IP follows the gateway; a failed policy write undoes the EC2 step and says so", async () => {
    h = Harness.create("cilium-aws", { env: { ...motoCredentials, KUBECONFIG: testKubeconfig() } });
    const harness = h;
    await h.program(async () => {
      const { IpPool, EgressIp } = harness.pkg<Pkg>("pulumi-egress-ipam");
      const pool = new IpPool("egress", { ranges: [{ subnet: "10.0.1.0/24" }], cloudReserved: "aws" });
      const e = new EgressIp("team", {
        pool,
        namespace: w.ns.x,
        failureDomains: [w.zone("a")],
        provisioner: {
          kind: "cilium",
          nodeSelector: w.selector,
          cloud: { kind: "aws", region, endpoint: moto.endpoint },
        },
      });
      return { ips: e.ips, hosts: e.hosts };
    });
    const instanceOf = (node: string) => aws.instanceIds[zone]![node === w.node.n1 ? 0 : 1]!;

    const up = await h.up();
    const [ip] = up.outputs.ips!.value as [string];
    const [host] = up.outputs.hosts!.value as [string];
    expect(ip).not.toBe(preexisting);
    const expected = (node: string) => {
      const placed: Record<string, string[]> = { [instanceOf(node)]: [ip] };
      const i2 = instanceOf(w.node.n2);
      placed[i2] = [...(placed[i2] ?? []), preexisting].sort();
      return placed;
    };
    expect(await onInstances()).toEqual(expected(host));
    expect(await pins(w.ns.x)).toEqual([[ip, host]]);

    // The gateway goes NotReady while the policy refuses updates (injected): the move's policy
    // write fails, the secondary IP is moved back to the old instance, and the error says so.
    const other = host === w.node.n1 ? w.node.n2 : w.node.n1;
    await setNodeReady(host, false);
    const allow = await denyWrites({ group, resource: plural, name: ciliumObjectName(w.ns.x) });
    try {
      await expect(h.up()).rejects.toThrow(/moved back to instance/);
      expect(await onInstances()).toEqual(expected(host));
      expect(await pins(w.ns.x)).toEqual([[ip, host]]);
    } finally {
      await allow();
    }
    await h.up();
    expect(await onInstances()).toEqual(expected(other));
    expect(await pins(w.ns.x)).toEqual([[ip, other]]);
    await setNodeReady(host, true);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});

    await h.destroy();
    expect(await policyExists(ciliumObjectName(w.ns.x))).toBe(false);
    const left: Record<string, string[]> = { [instanceOf(w.node.n2)]: [preexisting] };
    expect(await onInstances()).toEqual(left);
  });

  // Before issue 54, check read the policies only: a gateway's secondary IP taken off its instance
  // by hand (its traffic dropped there) or left on one was no finding, though refresh saw the first.
  it("check reads the EC2 side too: a secondary IP taken off its instance is missing, one of the stack's left on an instance leaked, somebody else's in use by others; the fixes it prints repair both", async () => {
    const harness = h!;
    const check = (...args: string[]) =>
      runCli(["check", "--stack", harness.fqStackName, ...args], harness.env);
    const nodeOf = (instance: string) => (instance === aws.instanceIds[zone]![0] ? w.node.n1 : w.node.n2);
    const eniOf = async (node: string) =>
      (await interfacesIn(ec2, [aws.subnetIds[zone]!])).find(
        (n) => n.Attachment?.InstanceId && nodeOf(n.Attachment.InstanceId) === node,
      )!;
    try {
      const up = await harness.up();
      const [ip] = up.outputs.ips!.value as [string];
      const [host] = up.outputs.hosts!.value as [string];
      const clean = await check();
      expect(clean.stderr).toBe("");
      expect(clean.stdout).toMatch(
        /provisioner cilium, cloud aws \(us-east-1 at http:\/\/127\.0\.0\.1:\d+\): 2 addresses on instances in 10\.0\.1\.0\/24/,
      );
      expect(clean.code).toBe(0);

      const eni = await eniOf(host);
      const record = eni.TagSet!.find((t) => t.Key === ownerTagKey(ip))!;
      await ec2.send(
        new UnassignPrivateIpAddressesCommand({
          NetworkInterfaceId: eni.NetworkInterfaceId,
          PrivateIpAddresses: [ip],
        }),
      );
      // The stack's by its record (as a removal that died before its untag leaves one), held by nobody.
      const other = host === w.node.n1 ? w.node.n2 : w.node.n1;
      const otherEni = (await eniOf(other)).NetworkInterfaceId!;
      const leaked = "10.0.1.150";
      await ec2.send(
        new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: otherEni, PrivateIpAddresses: [leaked] }),
      );
      await ec2.send(
        new CreateTagsCommand({
          Resources: [otherEni],
          Tags: [{ Key: ownerTagKey(leaked), Value: record.Value }],
        }),
      );

      const run = await check("--json");
      expect(run.stderr).toBe("");
      expect(run.code).toBe(1);
      const doc = JSON.parse(run.stdout) as { findings: { fix: string[] }[]; others: unknown[] };
      const refreshUp = [
        `pulumi refresh --stack ${harness.fqStackName}`,
        `pulumi up --stack ${harness.fqStackName}`,
      ];
      const unassign =
        `aws ec2 unassign-private-ip-addresses --region ${region} --endpoint-url ${moto.endpoint} ` +
        `--network-interface-id ${otherEni} --private-ip-addresses ${leaked}`;
      expect(doc.findings).toEqual([
        {
          kind: "missing",
          ip,
          expectedHost: host,
          urn: expect.stringMatching(/EgressIpAssignment::team-/),
          side: "cloud",
          fix: refreshUp,
        },
        { kind: "leaked", ip: leaked, actualHost: other, side: "cloud", fix: [unassign] },
      ]);
      expect(doc.others).toEqual([{ ip: preexisting, host: w.node.n2 }]);
      const text = await check();
      expect(text.stdout).toContain(`  ${ip}  cloud side: state: on ${host}  (`);
      expect(text.stdout).toContain(`  ${leaked}  cloud side: on ${other}\n    fix: ${unassign}\n`);

      // The fixes as printed (the aws CLI call through the SDK), then refresh and up.
      await ec2.send(
        new UnassignPrivateIpAddressesCommand({ NetworkInterfaceId: otherEni, PrivateIpAddresses: [leaked] }),
      );
      await harness.refresh();
      await harness.up();
      expect(
        (await secondaryIps(ec2, [aws.subnetIds[zone]!]))[
          aws.instanceIds[zone]![host === w.node.n1 ? 0 : 1]!
        ],
      ).toContain(ip);
      const after = await check();
      expect(after.stdout).toContain("no drift");
      expect(after.code).toBe(0);
    } finally {
      await harness.destroy();
    }
  });

  // Before issue 54, elasticIps under cloud was taken: up allocated an Elastic IP at create, left
  // it associated with another private address than the one its tag names, and nothing of the
  // kind showed, refreshed or checked it.
  it("refuses elasticIps under cloud at preview and up, naming it and what to use instead; nothing is allocated", async () => {
    const refused = Harness.create("cilium-aws-eip", {
      env: { ...motoCredentials, KUBECONFIG: testKubeconfig() },
    });
    try {
      await refused.program(async () => {
        const { IpPool, EgressIp } = refused.pkg<Pkg>("pulumi-egress-ipam");
        const pool = new IpPool("egress", { ranges: [{ subnet: "10.0.1.0/24" }], cloudReserved: "aws" });
        new EgressIp("team", {
          pool,
          namespace: w.ns.x,
          failureDomains: [w.zone("a")],
          provisioner: {
            kind: "cilium",
            nodeSelector: w.selector,
            cloud: { kind: "aws", region, endpoint: moto.endpoint, elasticIps: "allocate" },
          },
        });
      });
      const err = String(await refused.preview().catch((e: Error) => e));
      // The EgressIp's allocation (observeWith) or its assignment (provisioner): whichever is checked first.
      expect(err).toMatch(/property (observeWith|provisioner)\.cloud\.elasticIps value/);
      expect(err).toContain("[INVALID_CONFIG] Elastic IPs are not supported on the cloud side of cilium: ");
      expect(err).toContain("leave elasticIps out of cloud");
      await expect(refused.up()).rejects.toThrow(/\[INVALID_CONFIG\] Elastic IPs are not supported/);
      expect((await ec2.send(new DescribeAddressesCommand({}))).Addresses ?? []).toEqual([]);
      expect(await policyExists(ciliumObjectName(w.ns.x))).toBe(false);
    } finally {
      await refused.destroy().catch(() => undefined);
      refused.dispose();
    }
  });
});
