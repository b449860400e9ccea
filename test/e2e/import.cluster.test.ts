// `pulumi-egress-ipam import` on a cluster as the egressip-ipam-operator leaves it, run as a user
// runs it (the spawned CLI, the real kube-apiserver): the program it writes type-checks, its preview
// with the real engine shows every address on the node the cluster has it, and `up` changes no
// egress field of any HostSubnet or NetNamespace; a second preview is empty.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli";
import { changesOf, Harness } from "../support/harness";
import { testKubeconfig } from "../support/kube";
import { operatorWorld, type OperatorWorld } from "../support/operator-world";
import { hostSubnetIps, netNamespaceIps, sdnWorld, type SdnWorld } from "../support/sdn-world";

const net = `10.31.${1 + Math.floor(Math.random() * 250)}`;
const env = { KUBECONFIG: testKubeconfig() };

interface Plan {
  pools: { name: string; subnet: string; exclude: string[] }[];
  egressIps: {
    namespace: string;
    provisioner: { kind: string };
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
    w = await sdnWorld({ n1: { zone: "a", internalIP: `${net}.1` }, n2: { zone: "b" }, n3: { zone: "a" } }, [
      "t1",
      "t2",
      "idle",
    ]);
    op = await operatorWorld({
      name: `ipam-${w.zone("x")}`,
      topologyLabel: "topology.kubernetes.io/zone",
      nodeSelector: w.selector,
      cidrs: [
        {
          cidr: `${net}.0/28`,
          labelValue: w.zone("a"),
          reservedIPs: [`${net}.3`],
          nodes: [w.node.n1, w.node.n3],
        },
        { cidr: `${net}.16/28`, labelValue: w.zone("b"), nodes: [w.node.n2] },
      ],
      namespaces: [w.ns.t1, w.ns.t2],
      nodeAddresses: [`${net}.1`],
    });
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
    const preview = await h.preview();
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
