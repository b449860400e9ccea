// A cluster and its egress IPs in one stack: the kubeconfig is an output of a resource of the same
// program (an Echo of a secret stands in for an EKS cluster's `kubeconfig`), given to a shared
// pool's ledger and to the ovn provisioner as a value. The environment's KUBECONFIG names a file
// that does not exist, so every call reaches the cluster through the value or fails. Real engine,
// real kube-apiserver; state is read back to prove the kubeconfig is nowhere in clear text.
import * as fs from "node:fs";
import type * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";
import { runCli } from "../support/cli";
import { freshNamespace, kube, testKubeconfig } from "../support/kube";
import { sdnWorld, type SdnWorld } from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
type Testing = typeof import("../../provider/testing/index");
type Pulumi = typeof import("@pulumi/pulumi");
type Setting = { kubeconfig?: object } | undefined;
type Settings = {
  provisioner?: Setting;
  observeWith?: Setting;
  ledger?: Setting;
  pool?: { ledger?: Setting };
};

const octet = 1 + Math.floor(Math.random() * 120);
const net = `10.23.${octet}`;
const ovn = "k8s.ovn.org/v1";
const ipconfig = {
  "cloud.network.openshift.io/egress-ipconfig": JSON.stringify([
    { interface: "eth0", ifaddr: { ipv4: `${net}.0/24` }, capacity: { ipv4: 8 } },
  ]),
};

describe("a kubeconfig given as a value (an output of the same program), against kube-apiserver", () => {
  const h = Harness.create("kubeconfig-value", { env: { KUBECONFIG: "/nonexistent/kubeconfig" } });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  const { Echo } = h.pkg<Testing>("pulumi-egress-ipam/testing");
  const pulumi = h.pkg<Pulumi>("@pulumi/pulumi");
  let w: SdnWorld<"a1" | "a2", "x">;
  let ledgerNs: string;
  let text: string;
  /** What the program gives as the cluster's kubeconfig: the test cluster's, or a variant of it. */
  let given: string;
  let tokens: string[];
  const exportText = async () => JSON.stringify(await h.resources());
  const egressIps = async () => {
    const o = (await kube().objects.read({
      apiVersion: ovn,
      kind: "EgressIP",
      metadata: { name: `egress-ipam-${w.ns.x}` },
    })) as k8s.KubernetesObject & { spec: { egressIPs: string[] } };
    return o.spec.egressIPs;
  };

  beforeAll(async () => {
    w = await sdnWorld(
      {
        a1: { zone: "a", hostSubnet: false, annotations: ipconfig },
        a2: { zone: "a", hostSubnet: false, annotations: ipconfig },
      },
      ["x"],
      { netNamespaces: false },
    );
    ledgerNs = await freshNamespace("kcv");
    // The test cluster's kubeconfig (bearer tokens, CA embedded), current context admin@test.
    text = fs.readFileSync(testKubeconfig(), "utf8");
    tokens = [...text.matchAll(/token:\s*(\S+)/g)].map((m) => m[1]!);
    expect(tokens.length).toBeGreaterThan(0);
    given = text;
    await h.program(async () => {
      const cluster = new Echo("cluster", { value: pulumi.secret(given) });
      const kubeconfig = cluster.value;
      const pool = new IpPool("egress", {
        ranges: [{ subnet: `${net}.0/24`, rangeStart: `${net}.10` }],
        ledger: { kind: "kubernetes", name: "egress", namespace: ledgerNs, kubeconfig },
      });
      const x = new EgressIp("team-x", {
        pool,
        namespace: w.ns.x,
        failureDomains: [w.zone("a")],
        provisioner: { kind: "ovn", nodeSelector: w.selector, kubeconfig },
      });
      return { ips: x.ips, hosts: x.hosts };
    });
  });
  afterAll(async () => {
    h.dispose();
    await kube()
      .core.deleteNamespace({ name: ledgerNs })
      .catch(() => undefined);
    await w?.cleanup();
  });

  it("previews a stack whose cluster does not exist yet: the address is unknown until up, nothing fails", async () => {
    const preview = await h.preview();
    expect(preview.op(`EgressIpAssignment::team-x-${w.zone("a")}`)).toBe("create");
    expect(preview.planned(`EgressIpAssignment::team-x-${w.zone("a")}`)?.ip).toBeUndefined();
  });

  it("places the egress IP through the output in the same up that makes it", async () => {
    const up = await h.up();
    expect(up.outputs.ips!.value).toEqual([`${net}.10`]);
    expect([w.node.a1, w.node.a2]).toContain((up.outputs.hosts!.value as string[])[0]);
    expect(await egressIps()).toEqual([`${net}.10`]);
    const claims = await kube().core.listNamespacedConfigMap({ namespace: ledgerNs });
    expect(claims.items.map((c) => c.metadata?.name).filter((n) => n?.endsWith(`${net}.10`))).toHaveLength(1);
  });

  it("keeps the kubeconfig a secret in state: no token in the checkpoint, every kubeconfig setting encrypted", async () => {
    const state = await exportText();
    for (const token of tokens) expect(state).not.toContain(token);
    expect(state).not.toContain("BEGIN CERTIFICATE");
    const settings = (await h.resources()).flatMap((r) =>
      [r.inputs, r.outputs].flatMap((props) => {
        const p = props as Settings | undefined;
        return [p?.provisioner, p?.observeWith, p?.ledger, p?.pool?.ledger].filter(
          (s): s is { kubeconfig: object } => s?.kubeconfig !== undefined,
        );
      }),
    );
    // IpPool (ledger), IpAllocation (pool.ledger, observeWith), EgressIpAssignment (provisioner): inputs and outputs.
    expect(settings.length).toBeGreaterThanOrEqual(8);
    for (const s of settings) expect(Object.keys(s.kubeconfig)).toContain("ciphertext");
  });

  it("plans at preview what state has, and a refresh and a second up change nothing", async () => {
    const preview = await h.preview();
    expect(preview.planned("EgressIpAssignment::team-x-" + w.zone("a"))).toMatchObject({ ip: `${net}.10` });
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({});
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
    for (const token of tokens) expect(await exportText()).not.toContain(token);
  });

  it("takes a new kubeconfig for the same cluster as an update that moves nothing", async () => {
    given = `${text}\n# the same cluster, other credentials\n`;
    const preview = await h.preview();
    expect(changesOf(preview.changeSummary)).toEqual({ update: 4 }); // the cluster, the pool, allocation, assignment
    const up = await h.up();
    expect(changesOf(up.summary.resourceChanges)).toEqual({ update: 4 });
    expect(up.outputs.ips!.value).toEqual([`${net}.10`]);
    expect(await egressIps()).toEqual([`${net}.10`]);
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("refuses at preview a kubeconfig that points at another cluster, naming both, and changes nothing", async () => {
    const ca = /certificate-authority-data:\s*(\S+)/.exec(text)?.[1];
    expect(ca).toBeDefined();
    const before = given;
    given = text.replaceAll(ca!, Buffer.from("the CA of another cluster").toString("base64"));
    try {
      await expect(h.preview()).rejects.toThrow(
        /is on the cluster with ca sha256:[0-9a-f]{16}, but context .* another cluster/,
      );
    } finally {
      given = before;
    }
    expect(await egressIps()).toEqual([`${net}.10`]);
  });

  it("lets check reach the cluster through the kubeconfig the stack keeps, printing none of it", async () => {
    const run = await runCli(["check", "--stack", h.fqStackName], h.env);
    expect(run.stderr).not.toMatch(/no kubeconfig found/);
    expect(run.code).toBe(0);
    for (const token of tokens) expect(run.stdout + run.stderr).not.toContain(token);
  });

  it("takes the address off and releases the claim on destroy, through the value kept in state", async () => {
    await h.destroy();
    const left = await kube()
      .objects.read({ apiVersion: ovn, kind: "EgressIP", metadata: { name: `egress-ipam-${w.ns.x}` } })
      .then(
        () => true,
        (e: { code?: number }) => (e.code === 404 ? false : Promise.reject(e)),
      );
    expect(left).toBe(false);
    const claims = await kube().core.listNamespacedConfigMap({ namespace: ledgerNs });
    expect(claims.items.map((c) => c.metadata?.name).filter((n) => n?.endsWith(`${net}.10`))).toEqual([]);
  });
});
