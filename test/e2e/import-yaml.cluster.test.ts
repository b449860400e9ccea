// `pulumi-egress-ipam import --language yaml` on a cluster as the egressip-ipam-operator leaves it,
// run as a user runs it (the spawned CLI, the real kube-apiserver): the Pulumi.yaml it writes, run
// by the YAML language host through the egress-ipam plugin, previews every address on the node the
// cluster has it, and `up` changes no egress field of any HostSubnet or NetNamespace; a second
// preview is empty. Two namespaces share the pools, so the program's `after` is what orders them.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli";
import { changesOf, type Harness } from "../support/harness";
import { testKubeconfig } from "../support/kube";
import { operatorWorld, type OperatorWorld } from "../support/operator-world";
import { pluginProject } from "../support/plugin-project";
import { hostSubnetIps, netNamespaceIps, sdnWorld, type SdnWorld } from "../support/sdn-world";

const net = `10.32.${1 + Math.floor(Math.random() * 250)}`;
const env = { KUBECONFIG: testKubeconfig() };

describe("import --language yaml: the operator's cluster becomes a YAML program that adopts it unchanged", () => {
  let w: SdnWorld<"n1" | "n2" | "n3", "t1" | "t2">;
  let op: OperatorWorld;
  let h: Harness | undefined;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "import-yaml-"));
  const snapshot = async () => ({
    netNamespaces: await Promise.all([w.ns.t1, w.ns.t2].map(netNamespaceIps)),
    hostSubnets: await Promise.all([w.node.n1, w.node.n2, w.node.n3].map(hostSubnetIps)),
  });

  beforeAll(async () => {
    w = await sdnWorld({ n1: { zone: "a", internalIP: `${net}.1` }, n2: { zone: "b" }, n3: { zone: "a" } }, [
      "t1",
      "t2",
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
      taken: [`${net}.1`],
    });
  });
  afterAll(async () => {
    await h?.destroy().catch(() => undefined);
    h?.dispose();
    fs.rmSync(tmp, { recursive: true, force: true });
    await op?.cleanup();
    await w?.cleanup();
  });

  it("the program previews every address where the cluster has it, and up changes nothing", async () => {
    const out = path.join(tmp, "Pulumi.yaml");
    const run = await runCli(
      ["import", "--namespace", w.ns.t1, "--namespace", w.ns.t2, "--language", "yaml", "--out", out],
      env,
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      /^wrote .*Pulumi\.yaml: 2 pool\(s\), 2 EgressIp\(s\) adopting 4 address\(es\)/,
    );
    const program = fs.readFileSync(out, "utf8");
    expect(program).toContain(`after: "\${${w.ns.t1}}"`);

    const before = await snapshot();
    h = pluginProject(process.env.EGRESS_IPAM_CONSUMER!, "import-yaml", { "Pulumi.yaml": program }, { env });
    const preview = await h.preview();
    for (const ns of [w.ns.t1, w.ns.t2]) {
      const { ips, nodes } = op.assigned[ns]!;
      [w.zone("a"), w.zone("b")].forEach((zone, i) => {
        expect(preview.planned(`IpAllocation::${ns}-${zone}`)?.ip).toBe(ips[i]);
        expect(preview.planned(`EgressIpAssignment::${ns}-${zone}`)?.host).toBe(nodes[i]);
      });
    }
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
    expect(run.stderr).toContain('--language "cobol": give typescript or yaml');
    expect(fs.existsSync(out)).toBe(false);
  });
});
