// A cluster and its egress IPs in one stack: the kubeconfig is an output of a resource of the same
// program (an output of an Echo stands in for an EKS cluster's `kubeconfig`), given to a shared
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
type Setting = { kubeconfig?: object } | undefined;
type StoredResource = { urn: string; inputs?: unknown; outputs?: unknown };
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
  let w: SdnWorld<"a1" | "a2", "x">;
  let ledgerNs: string;
  let text: string;
  /** What the program gives as the cluster's kubeconfig: the test cluster's, or a variant of it. */
  let given: string;
  let tokens: string[];
  /** The tokens and the CA data of the kubeconfig: none may be stored in clear text. */
  let secrets: string[];
  /** The checkpoint as the backend stores it (the file; `pulumi stack export` decrypts secrets). */
  const stored = (): StoredResource[] =>
    JSON.parse(fs.readFileSync(h.checkpointFile, "utf8")).checkpoint.latest.resources;
  /** Where the stored checkpoint has a token or the CA of the kubeconfig in clear text: `<name> <path>` each. */
  const leaks = () => {
    const found: string[] = [];
    const walk = (v: unknown, at: string) => {
      if (typeof v === "string") {
        if (secrets.some((t) => v.includes(t))) found.push(at);
      } else if (v && typeof v === "object") {
        for (const [k, x] of Object.entries(v)) walk(x, `${at}.${k}`);
      }
    };
    for (const r of stored()) walk(r, r.urn.replace(/.*::/, ""));
    return found;
  };
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
    secrets = [...tokens, ...[...text.matchAll(/certificate-authority-data:\s*(\S+)/g)].map((m) => m[1]!)];
    given = text;
    await h.program(async () => {
      // Like a kubeconfig built from an EKS cluster's outputs with pulumi.interpolate: known once the
      // cluster is made, and not a secret (the resources must make it one).
      const cluster = new Echo("cluster", { value: "prod" });
      const kubeconfig = cluster.id.apply(() => given);
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
    const unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"; // how the engine shows a value preview cannot know
    expect(preview.planned(`EgressIpAssignment::team-x-${w.zone("a")}`)?.ip).toBe(unknown);
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
    expect(leaks().join("\n")).toBe("");
    const settings = stored().flatMap((r) =>
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
    expect(leaks().join("\n")).toBe("");
  });

  it("takes a new kubeconfig for the same cluster as an update that moves nothing", async () => {
    given = `${text}\n# the same cluster, other credentials\n`;
    const preview = await h.preview();
    expect(changesOf(preview.changeSummary)).toEqual({ update: 3 }); // the pool, its allocation, the assignment
    const up = await h.up();
    expect(changesOf(up.summary.resourceChanges)).toEqual({ update: 3 });
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

  it.each([
    ["check", [], /provisioner ovn: 1 address on hosts/],
    ["check", ["--json"], /"drift": false/],
    ["report", [], /10\.23\.\d+\.10/],
    ["report", ["--json"], /10\.23\.\d+\.10/],
  ])(
    "lets %s %j reach the cluster through the kubeconfig the stack keeps, printing none of it",
    async (command, flags, shows) => {
      const run = await runCli([command, "--stack", h.fqStackName, ...(flags as string[])], h.env);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(shows as RegExp);
      for (const secret of secrets) expect(run.stdout).not.toContain(secret);
    },
  );

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
