// `pulumi-egress-ipam import --language yaml|python` on a cluster as the egressip-ipam-operator
// leaves it, run as a user runs it (the spawned CLI, the real kube-apiserver): the programs it
// writes, run by the YAML and Python language hosts through the egress-ipam plugin (and its Python
// SDK), preview every address on the node the cluster has it; the YAML one's `up` changes no egress
// field of any HostSubnet or NetNamespace, and a second preview is empty (one stack adopts, as a
// user's would). Two namespaces share the pools, so the programs' `after` is what orders them.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli";
import { changesOf, type Harness } from "../support/harness";
import { testKubeconfig } from "../support/kube";
import { importedCluster, type OperatorWorld } from "../support/operator-world";
import { pluginProject, pythonSdk, writeProjectFile } from "../support/plugin-project";
import { hostSubnetIps, netNamespaceIps, type SdnWorld } from "../support/sdn-world";

const net = `10.32.${1 + Math.floor(Math.random() * 250)}`;
const env = { KUBECONFIG: testKubeconfig() };

describe("import --language yaml|python: the operator's cluster becomes a program that adopts it unchanged", () => {
  let w: SdnWorld<"n1" | "n2" | "n3", "t1" | "t2">;
  let op: OperatorWorld;
  const harnesses: Harness[] = [];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "import-yaml-"));
  const snapshot = async () => ({
    netNamespaces: await Promise.all([w.ns.t1, w.ns.t2].map(netNamespaceIps)),
    hostSubnets: await Promise.all([w.node.n1, w.node.n2, w.node.n3].map(hostSubnetIps)),
  });

  beforeAll(async () => {
    ({ w, op } = await importedCluster(net));
  });
  afterAll(async () => {
    for (const h of harnesses) {
      await h.destroy().catch(() => undefined);
      h.dispose();
    }
    fs.rmSync(tmp, { recursive: true, force: true });
    await op?.cleanup();
    await w?.cleanup();
  });

  const consumer = () => process.env.EGRESS_IPAM_CONSUMER!;
  const importAs = async (language: string, file: string) => {
    const out = path.join(tmp, file);
    const run = await runCli(
      ["import", "--namespace", w.ns.t1, "--namespace", w.ns.t2, "--language", language, "--out", out],
      env,
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      new RegExp(
        `^wrote .*${file.replace(".", "\\.")}: 2 pool\\(s\\), 2 EgressIp\\(s\\) adopting 4 address\\(es\\)`,
      ),
    );
    return fs.readFileSync(out, "utf8");
  };
  /** Each namespace's addresses at preview are the cluster's, each on the node the cluster has it on. */
  const expectClusterPlan = (preview: Awaited<ReturnType<Harness["preview"]>>) => {
    for (const ns of [w.ns.t1, w.ns.t2]) {
      const { ips, nodes } = op.assigned[ns]!;
      [w.zone("a"), w.zone("b")].forEach((zone, i) => {
        expect(preview.planned(`IpAllocation::${ns}-${zone}`)?.ip).toBe(ips[i]);
        expect(preview.planned(`EgressIpAssignment::${ns}-${zone}`)?.host).toBe(nodes[i]);
      });
    }
  };

  it("python: the program previews every address where the cluster has it", async () => {
    const program = await importAs("python", "__main__.py");
    expect(program).toContain(`after=egress_ips["${w.ns.t1}"],`);
    const h = pluginProject(
      consumer(),
      "import-python",
      { "Pulumi.yaml": "name: imported-python\nruntime: python\n", "__main__.py": program },
      { env: { ...env, PYTHONPATH: pythonSdk(consumer()) } },
    );
    harnesses.push(h);
    await h.project();
    expectClusterPlan(await h.preview());
  });

  it("yaml: the program previews every address where the cluster has it, and up changes nothing", async () => {
    const program = await importAs("yaml", "Pulumi.yaml");
    expect(program).toContain(`after: "\${${w.ns.t1}}"`);
    const before = await snapshot();
    // Without the `after` it writes, the two EgressIps' new holders of one pool are refused.
    const unordered = program.replace(/^ {6}after: .*\n/m, "");
    const h = pluginProject(consumer(), "import-yaml", { "Pulumi.yaml": unordered }, { env });
    harnesses.push(h);
    await h.project();
    expect(String(await h.preview().catch((e: Error) => e))).toMatch(/INVALID_CONFIG.*nothing orders them/);
    writeProjectFile(h, "Pulumi.yaml", program);
    expectClusterPlan(await h.preview());
    const up = await h.up();
    // The outputs are each namespace's addresses, the cluster's own.
    const outputs = Object.values(up.outputs).map((o) => JSON.stringify(o.value));
    expect(outputs.sort()).toEqual(
      [w.ns.t1, w.ns.t2].map((ns) => JSON.stringify(op.assigned[ns]!.ips)).sort(),
    );
    expect(await snapshot()).toEqual(before);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });

  it("an unknown --language is refused naming it, and nothing is written", async () => {
    const out = path.join(tmp, "index.py");
    const run = await runCli(["import", "--language", "cobol", "--out", out], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--language "cobol": give one of typescript, yaml, python');
    expect(fs.existsSync(out)).toBe(false);
  });
});
