// `pulumi-egress-ipam import` on a cluster as the egressip-ipam-operator leaves it, run as a user
// runs it (the spawned CLI, the real kube-apiserver): the program it writes type-checks, its preview
// with the real engine shows every address on the node the cluster has it, and `up` changes no
// egress field of any HostSubnet or NetNamespace (nor, on AWS, any instance's secondary IPs); a
// second preview is empty. The same for a hand-made CiliumEgressGatewayPolicy and Antrea Egresses:
// their spec and status stay as they were.
import { AssignPrivateIpAddressesCommand, type EC2Client } from "@aws-sdk/client-ec2";
import * as k8s from "@kubernetes/client-node";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli";
import { changesOf, Harness } from "../support/harness";
import { kube, testKubeconfig } from "../support/kube";
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
import {
  importedCluster,
  operatorAnnotation,
  operatorWorld,
  type OperatorWorld,
} from "../support/operator-world";
import { hostSubnetIps, netNamespaceIps, sdnWorld, type SdnWorld } from "../support/sdn-world";

const net = `10.31.${1 + Math.floor(Math.random() * 250)}`;
const env = { KUBECONFIG: testKubeconfig() };

interface Plan {
  pools: { name: string; subnet: string; exclude: string[] }[];
  egressIps: {
    namespace: string;
    provisioner: { kind: string; destinations?: string[]; excluded?: string[]; externalIPPool?: string };
    addresses: { ip: string; node?: string }[];
  }[];
  problems: string[];
}

describe("import: the operator's cluster becomes a program that adopts it unchanged", () => {
  let w: SdnWorld<"n1" | "n2" | "n3", "t1" | "t2" | "idle">;
  let op: OperatorWorld;
  let dir = "";
  let h: Harness | undefined;
  const snapshot = async () => ({
    netNamespaces: await Promise.all([w.ns.t1, w.ns.t2, w.ns.idle].map(netNamespaceIps)),
    hostSubnets: await Promise.all([w.node.n1, w.node.n2, w.node.n3].map(hostSubnetIps)),
  });

  beforeAll(async () => {
    ({ w, op } = await importedCluster(net, ["idle"]));
    // A namespace outside --namespace with an address no pool holds: a problem only when imported.
    const idle = await kube().core.readNamespace({ name: w.ns.idle });
    idle.metadata!.annotations = { [operatorAnnotation.ips]: "192.0.2.7" };
    await kube().core.replaceNamespace({ name: w.ns.idle, body: idle });
  });
  afterAll(async () => {
    await h?.destroy().catch(() => undefined);
    h?.dispose();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    await op?.cleanup();
    await w?.cleanup();
  });

  const only = () => ["--namespace", w.ns.t1, "--namespace", w.ns.t2];

  it("--json: the operator's pools and each namespace's addresses on their nodes", async () => {
    // The operator's first choices, as its fixture made them: .1 is n1's address, .3 reserved.
    expect(op.assigned[w.ns.t1]).toEqual({ ips: [`${net}.2`, `${net}.17`], nodes: [w.node.n1, w.node.n2] });
    expect(op.assigned[w.ns.t2]).toEqual({ ips: [`${net}.4`, `${net}.18`], nodes: [w.node.n3, w.node.n2] });
    const run = await runCli(["import", ...only(), "--json"], env);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const plan = JSON.parse(run.stdout) as Plan;
    expect(plan.problems).toEqual([]);
    const all = await runCli(["import", "--json"], env);
    expect(all.code).toBe(1);
    expect((JSON.parse(all.stdout) as Plan).problems).toContainEqual(
      expect.stringMatching(new RegExp(`^192\\.0\\.2\\.7 of namespace ${w.ns.idle} .*give --cidr`)),
    );
    expect(plan.pools.map((p) => [p.subnet, p.exclude])).toEqual([
      [`${net}.0/28`, [`${net}.1`, `${net}.3`]],
      [`${net}.16/28`, []],
    ]);
    expect(
      plan.egressIps.map((e) => [e.namespace, e.provisioner.kind, e.addresses.map((a) => [a.ip, a.node])]),
    ).toEqual(
      [w.ns.t1, w.ns.t2].map((ns) => [
        ns,
        "ocp-static",
        op.assigned[ns]!.ips.map((ip, i) => [ip, op.assigned[ns]!.nodes[i]]),
      ]),
    );
  });

  it("the program type-checks, previews every address where the cluster has it, and up changes nothing", async () => {
    const consumer = process.env.EGRESS_IPAM_CONSUMER!;
    fs.mkdirSync(path.join(consumer, "runs"), { recursive: true });
    dir = fs.mkdtempSync(path.join(consumer, "runs", "imported-"));
    const run = await runCli(["import", ...only(), "--out", path.join(dir, "index.ts")], env);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^wrote .*index\.ts: 2 pool\(s\), 2 EgressIp\(s\) adopting 4 address\(es\)/);
    fs.writeFileSync(path.join(dir, "Pulumi.yaml"), "name: imported\nruntime: nodejs\n");
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "imported", main: "index.ts" }));
    const tsc = spawnSync(
      path.join(consumer, "node_modules", ".bin", "tsc"),
      [
        "--noEmit",
        "--strict",
        "--esModuleInterop",
        "--skipLibCheck",
        "--target",
        "es2022",
        "--module",
        "commonjs",
        "index.ts",
      ],
      { cwd: dir, encoding: "utf8" },
    );
    expect(tsc.stdout + tsc.stderr).toBe("");
    expect(tsc.status).toBe(0);

    const before = await snapshot();
    h = Harness.forProject(consumer, dir, { env });
    await h.project();
    // On a failure, the program the CLI wrote (the run's folder is removed after the file).
    const preview = await h.preview().catch((e: Error) => {
      throw new Error(
        `${e.message}\n--- index.ts ---\n${fs.readFileSync(path.join(dir, "index.ts"), "utf8")}`,
      );
    });
    for (const ns of [w.ns.t1, w.ns.t2]) {
      const { ips, nodes } = op.assigned[ns]!;
      [w.zone("a"), w.zone("b")].forEach((zone, i) => {
        expect(preview.planned(`IpAllocation::${ns}-${zone}`)?.ip).toBe(ips[i]);
        expect(preview.planned(`EgressIpAssignment::${ns}-${zone}`)?.host).toBe(nodes[i]);
      });
    }
    await h.up();
    expect(await snapshot()).toEqual(before);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });
});

// The same on AWS (moto's EC2): the operator also made each address a secondary IP of its node's
// instance, and never handed out the subnet's first three addresses or one in use. The program
// import writes has ocp-static with cloud: aws in the nodes' region; the stack reaches moto through
// AWS_ENDPOINT_URL_EC2, as a user's would reach a VPC endpoint.
describe("import on AWS: the secondary IPs stay on their instances too", () => {
  const region = "us-east-1";
  const subnets = { "us-east-1a": "10.0.1.0/24", "us-east-1b": "10.0.2.0/24" } as const;
  let moto: MotoServer;
  let ec2: EC2Client;
  let aws: World;
  let w: SdnWorld<"n1" | "n2", "t1">;
  let op: OperatorWorld;
  let h: Harness | undefined;
  let dir = "";
  const onInstances = () => secondaryIps(ec2, Object.values(aws.subnetIds));

  beforeAll(async () => {
    moto = await startMoto();
    ec2 = ec2Client(moto.endpoint, region);
    aws = await createWorld(ec2, { region, subnets, instances: { "us-east-1a": [{}], "us-east-1b": [{}] } });
    const enis = await interfacesIn(ec2, Object.values(aws.subnetIds));
    const eniOf = (instance: string) => enis.find((e) => e.Attachment?.InstanceId === instance)!;
    const [i1, i2] = [aws.instanceIds["us-east-1a"]![0]!, aws.instanceIds["us-east-1b"]![0]!];
    w = await sdnWorld(
      {
        n1: { zone: "a", providerID: `aws:///us-east-1a/${i1}`, internalIP: eniOf(i1).PrivateIpAddress! },
        n2: { zone: "b", providerID: `aws:///us-east-1b/${i2}`, internalIP: eniOf(i2).PrivateIpAddress! },
      },
      ["t1"],
    );
    const instanceOf = { [w.node.n1]: i1, [w.node.n2]: i2 };
    op = await operatorWorld({
      name: `ipam-${w.zone("x")}`,
      topologyLabel: "topology.kubernetes.io/zone",
      nodeSelector: w.selector,
      cidrs: [
        { cidr: subnets["us-east-1a"], labelValue: w.zone("a"), nodes: [w.node.n1] },
        { cidr: subnets["us-east-1b"], labelValue: w.zone("b"), nodes: [w.node.n2] },
      ],
      namespaces: [w.ns.t1],
      taken: [
        ...["10.0.1", "10.0.2"].flatMap((n) => [1, 2, 3].map((i) => `${n}.${i}`)),
        ...enis.flatMap((e) => (e.PrivateIpAddresses ?? []).map((a) => a.PrivateIpAddress!)),
      ],
      onPlace: async (node, ip) => {
        await ec2.send(
          new AssignPrivateIpAddressesCommand({
            NetworkInterfaceId: eniOf(instanceOf[node]!).NetworkInterfaceId,
            PrivateIpAddresses: [ip],
          }),
        );
      },
    });
  }, 120_000);
  afterAll(async () => {
    await h?.destroy().catch(() => undefined);
    h?.dispose();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    await op?.cleanup();
    await w?.cleanup();
    await moto?.stop();
  });

  it("the program has cloud: aws; preview plans each address on its node; up changes neither cluster nor EC2", async () => {
    const { ips, nodes } = op.assigned[w.ns.t1]!;
    const [i1, i2] = [aws.instanceIds["us-east-1a"]![0]!, aws.instanceIds["us-east-1b"]![0]!];
    expect(await onInstances()).toEqual({ [i1]: [ips[0]], [i2]: [ips[1]] });
    const consumer = process.env.EGRESS_IPAM_CONSUMER!;
    fs.mkdirSync(path.join(consumer, "runs"), { recursive: true });
    dir = fs.mkdtempSync(path.join(consumer, "runs", "imported-aws-"));
    const file = path.join(dir, "index.ts");
    const run = await runCli(["import", "--namespace", w.ns.t1, "--out", file], env);
    expect(run.stderr).not.toMatch(/not imported/);
    expect(run.code).toBe(0);
    const program = fs.readFileSync(file, "utf8");
    expect(program).toContain(`cloud: { kind: "aws", region: "us-east-1" }`);
    expect(program).toContain(`cloudReserved: "aws"`);
    fs.writeFileSync(path.join(dir, "Pulumi.yaml"), "name: imported-aws\nruntime: nodejs\n");
    fs.writeFileSync(
      path.join(dir, "package.json"),
      JSON.stringify({ name: "imported-aws", main: "index.ts" }),
    );

    const snapshot = async () => [
      await onInstances(),
      await netNamespaceIps(w.ns.t1),
      await Promise.all([w.node.n1, w.node.n2].map(hostSubnetIps)),
    ];
    const before = await snapshot();
    h = Harness.forProject(consumer, dir, {
      env: { ...env, ...motoCredentials, AWS_ENDPOINT_URL_EC2: moto.endpoint },
    });
    await h.project();
    const preview = await h.preview();
    [w.zone("a"), w.zone("b")].forEach((zone, i) => {
      expect(preview.planned(`IpAllocation::${w.ns.t1}-${zone}`)?.ip).toBe(ips[i]);
      expect(preview.planned(`EgressIpAssignment::${w.ns.t1}-${zone}`)?.host).toBe(nodes[i]);
    });
    await h.up();
    expect(await snapshot()).toEqual(before);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });
});

/** Type-checks the written program as a user's project would (`tsc --strict`); its output. */
function typeCheck(consumer: string, dir: string) {
  return spawnSync(
    path.join(consumer, "node_modules", ".bin", "tsc"),
    [
      "--noEmit",
      "--strict",
      "--esModuleInterop",
      "--skipLibCheck",
      "--target",
      "es2022",
      "--module",
      "commonjs",
      "index.ts",
    ],
    { cwd: dir, encoding: "utf8" },
  );
}

// Cilium and Antrea written by hand: a CiliumEgressGatewayPolicy with two gateways (one pinned by
// hostname, one on a group of Nodes, which Cilium sends through the first by name) and two Egresses
// (the test writes status.egressNode as Antrea's agent would). Pools come from --cidr.
describe("import: hand-made Cilium and Antrea objects become a program that adopts them unchanged", () => {
  const cni = `10.38.${1 + Math.floor(Math.random() * 250)}`;
  const cilium = { group: "cilium.io", version: "v2", plural: "ciliumegressgatewaypolicies" };
  const antrea = { group: "crd.antrea.io", version: "v1beta1", plural: "egresses" };
  type Api = typeof cilium | typeof antrea;
  type Obj = k8s.KubernetesObject & { spec: unknown; status?: unknown };
  const custom = () => kube().config.makeApiClient(k8s.CustomObjectsApi);
  const read = (api: Api, name: string) => custom().getClusterCustomObject({ ...api, name }) as Promise<Obj>;
  let w: SdnWorld<"a1" | "a2" | "b1", "c" | "r">;
  let h: Harness | undefined;
  let dir = "";
  const made: [Api, string][] = [];
  const ip = (n: number) => `${cni}.${n}`;
  const names = { policy: "", egressA: "", egressB: "" };
  /** What adoption must leave as it was: each object's spec and status. */
  const snapshot = async () =>
    Promise.all(
      made.map(async ([api, name]) => {
        const o = await read(api, name);
        return [name, o.spec, o.status ?? null];
      }),
    );

  beforeAll(async () => {
    w = await sdnWorld(
      {
        a1: { zone: "a", hostSubnet: false },
        a2: { zone: "a", hostSubnet: false },
        b1: { zone: "b", hostSubnet: false },
      },
      ["c", "r"],
      { netNamespaces: false },
    );
    const create = async (api: Api, kind: string, key: string, spec: Record<string, unknown>) => {
      const name = `hand-made-${key}-${w.zone("x")}`;
      await custom().createClusterCustomObject({
        ...api,
        body: { apiVersion: `${api.group}/${api.version}`, kind, metadata: { name }, spec },
      });
      made.push([api, name]);
      return name;
    };
    names.policy = await create(cilium, "CiliumEgressGatewayPolicy", "c", {
      selectors: [{ podSelector: { matchLabels: { "io.kubernetes.pod.namespace": w.ns.c } } }],
      destinationCIDRs: ["0.0.0.0/0"],
      excludedCIDRs: ["192.168.0.0/16"],
      egressGateway: {
        nodeSelector: { matchLabels: { "kubernetes.io/hostname": w.node.a2 } },
        egressIP: ip(5),
      },
      egressGateways: [
        { nodeSelector: { matchLabels: { "kubernetes.io/hostname": w.node.a2 } }, egressIP: ip(5) },
        { nodeSelector: { matchLabels: { "topology.kubernetes.io/zone": w.zone("b") } }, egressIP: ip(6) },
      ],
    });
    const appliedTo = { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": w.ns.r } } };
    names.egressA = await create(antrea, "Egress", "ra", {
      appliedTo,
      egressIP: ip(9),
      externalIPPool: "egress-pool",
    });
    names.egressB = await create(antrea, "Egress", "rb", {
      appliedTo,
      egressIP: ip(10),
      externalIPPool: "egress-pool",
    });
    for (const [name, node] of [
      [names.egressA, w.node.a1],
      [names.egressB, w.node.b1],
    ] as const) {
      await custom().patchClusterCustomObjectStatus(
        { ...antrea, name, body: { status: { egressNode: node } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
    }
  });
  afterAll(async () => {
    await h?.destroy().catch(() => undefined);
    h?.dispose();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    for (const [api, name] of made)
      await custom()
        .deleteClusterCustomObject({ ...api, name })
        .catch(() => undefined);
    await w?.cleanup();
  });

  const args = () => ["import", "--namespace", w.ns.c, "--namespace", w.ns.r, "--cidr", `${cni}.0/28`];

  it("--json: cilium with the policy's destinations, antrea with the Egresses' externalIPPool, each address on its Node", async () => {
    const run = await runCli([...args(), "--json"], env);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const plan = JSON.parse(run.stdout) as Plan;
    expect(plan.problems).toEqual([]);
    expect(
      plan.egressIps.map((e) => [e.namespace, e.provisioner, e.addresses.map((a) => [a.ip, a.node])]),
    ).toEqual([
      [
        w.ns.c,
        { kind: "cilium", destinations: ["0.0.0.0/0"], excluded: ["192.168.0.0/16"] },
        [
          [ip(5), w.node.a2],
          [ip(6), w.node.b1],
        ],
      ],
      [
        w.ns.r,
        { kind: "antrea", externalIPPool: "egress-pool" },
        [
          [ip(9), w.node.a1],
          [ip(10), w.node.b1],
        ],
      ],
    ]);
  });

  it("the program type-checks, previews exactly the cluster's addresses, and up changes no spec or status", async () => {
    const consumer = process.env.EGRESS_IPAM_CONSUMER!;
    fs.mkdirSync(path.join(consumer, "runs"), { recursive: true });
    dir = fs.mkdtempSync(path.join(consumer, "runs", "imported-cni-"));
    const run = await runCli([...args(), "--out", path.join(dir, "index.ts")], env);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      /^wrote .*index\.ts: 1 pool\(s\), 2 EgressIp\(s\) adopting 4 address\(es\), 0 CidrAssignment/,
    );
    fs.writeFileSync(path.join(dir, "Pulumi.yaml"), "name: imported-cni\nruntime: nodejs\n");
    fs.writeFileSync(
      path.join(dir, "package.json"),
      JSON.stringify({ name: "imported-cni", main: "index.ts" }),
    );
    const tsc = typeCheck(consumer, dir);
    expect(tsc.stdout + tsc.stderr).toBe("");
    expect(tsc.status).toBe(0);

    const before = await snapshot();
    h = Harness.forProject(consumer, dir, { env });
    await h.project();
    const preview = await h.preview();
    const planned = (ns: string) =>
      [w.zone("a"), w.zone("b")].map((zone) => [
        preview.planned(`IpAllocation::${ns}-${zone}`)?.ip,
        preview.planned(`EgressIpAssignment::${ns}-${zone}`)?.host,
      ]);
    expect(planned(w.ns.c)).toEqual([
      [ip(5), w.node.a2],
      [ip(6), w.node.b1],
    ]);
    expect(planned(w.ns.r)).toEqual([
      [ip(9), w.node.a1],
      [ip(10), w.node.b1],
    ]);
    await h.up();
    // The one change to a spec: the gateway on a group of Nodes pinned by hostname to b1, which
    // Cilium already sent it through.
    const pinnedB1 = {
      nodeSelector: { matchLabels: { "kubernetes.io/hostname": w.node.b1 } },
      egressIP: ip(6),
    };
    const policySpec = before[0]![1] as { egressGateways: unknown[] };
    const want = [
      [before[0]![0], { ...policySpec, egressGateways: [policySpec.egressGateways[0], pinnedB1] }, null],
      ...before.slice(1),
    ];
    expect(await snapshot()).toEqual(want);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });
});
