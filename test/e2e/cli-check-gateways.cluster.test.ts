// `pulumi-egress-ipam check` for the cilium and antrea provisioners, run as a user runs it (the
// spawned CLI) on stacks the real engine made against the real kube-apiserver: no drift right after
// up; a gateway re-pinned behind the stack's back is misplaced (cilium) or recorded where Antrea put
// it (antrea: refresh and up only); a foreign object's pool address is in use by others, with no
// command; the stack's object deleted is missing; refresh and up repair the stack's own, and check
// is clean again.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { antreaObjectName } from "../../provider/provisioners/kubernetes/antrea/antrea";
import { ciliumObjectName } from "../../provider/provisioners/kubernetes/cilium/cilium";
import { runCli } from "../support/cli";
import { Harness } from "../support/harness";
import { kube, testKubeconfig, uniqueName } from "../support/kube";
import { sdnWorld, type SdnWorld } from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
interface Finding {
  kind: string;
  ip: string;
  expectedHost?: string;
  actualHost?: string;
  urn?: string;
  fix: string[];
}
const custom = () => kube().config.makeApiClient(k8s.CustomObjectsApi);
const merge = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);

describe.each([
  [
    "cilium",
    {
      group: "cilium.io",
      version: "v2",
      plural: "ciliumegressgatewaypolicies",
      kind: "CiliumEgressGatewayPolicy",
    },
  ],
  ["antrea", { group: "crd.antrea.io", version: "v1beta1", plural: "egresses", kind: "Egress" }],
] as const)("check with the %s provisioner, against kube-apiserver", (kind, api) => {
  const net = `10.35.${1 + Math.floor(Math.random() * 250)}`;
  const h = Harness.create(`cli-check-${kind}`, { env: { KUBECONFIG: testKubeconfig() } });
  let w: SdnWorld<"a1" | "a2", "x">;
  const foreign = uniqueName("foreign");
  let planned = { ip: "", host: "" };
  const check = (...args: string[]) => runCli(["check", "--stack", h.fqStackName, ...args], h.env);
  const refreshUp = () => [`pulumi refresh --stack ${h.fqStackName}`, `pulumi up --stack ${h.fqStackName}`];
  const foreignSpec = (ip: string, node: string) =>
    kind === "cilium"
      ? {
          selectors: [{ podSelector: { matchLabels: { app: "elsewhere" } } }],
          destinationCIDRs: ["0.0.0.0/0"],
          egressGateway: { nodeSelector: { matchLabels: { "kubernetes.io/hostname": node } }, egressIP: ip },
        }
      : { appliedTo: { podSelector: { matchLabels: { app: "elsewhere" } } }, egressIP: ip };

  beforeAll(async () => {
    const node = { zone: "a", hostSubnet: false as const };
    w = await sdnWorld({ a1: node, a2: node }, ["x"], { netNamespaces: false });
    await h.program(async () => {
      const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
      const provisioner =
        kind === "cilium"
          ? { kind, nodeSelector: w.selector }
          : { kind, nodeSelector: w.selector, externalIPPool: "egress-pool" };
      const pool = new IpPool("egress", { ranges: [{ subnet: `${net}.0/24`, rangeStart: `${net}.10` }] });
      const x = new EgressIp("team-x", {
        pool,
        namespace: w.ns.x,
        failureDomains: [w.zone("a")],
        provisioner,
      });
      return { ip: x.ips.apply((l) => l[0]), host: x.hosts.apply((l) => l[0]) };
    });
    const up = await h.up();
    planned = { ip: String(up.outputs.ip!.value), host: String(up.outputs.host!.value) };
    if (kind === "antrea") {
      // Antrea's agent on the planned Node reports it.
      await custom().patchClusterCustomObjectStatus(
        {
          ...api,
          name: antreaObjectName(w.ns.x, planned.ip),
          body: { status: { egressNode: planned.host } },
        },
        merge,
      );
    }
  });
  afterAll(async () => {
    await h.destroy().catch(() => undefined);
    h.dispose();
    for (const name of [foreign, `${foreign}-b`])
      await custom()
        .deleteClusterCustomObject({ ...api, name })
        .catch(() => undefined);
    await w?.cleanup();
  });

  it("finds no drift right after up", async () => {
    const run = await check();
    expect(run.stderr).toBe("");
    expect(run.stdout).toContain("no drift");
    expect(run.code).toBe(0);
  });

  it("moved behind the stack's back: misplaced; a foreign object's pool address: in use by others, no fix; refresh and up repair the stack's", async () => {
    const other = planned.host === w.node.a1 ? w.node.a2 : w.node.a1;
    if (kind === "cilium") {
      const gateway = {
        nodeSelector: { matchLabels: { "kubernetes.io/hostname": other } },
        egressIP: planned.ip,
      };
      await custom().patchClusterCustomObject(
        {
          ...api,
          name: ciliumObjectName(w.ns.x),
          body: { spec: { egressGateway: gateway, egressGateways: [gateway] } },
        },
        merge,
      );
    } else {
      await custom().patchClusterCustomObjectStatus(
        { ...api, name: antreaObjectName(w.ns.x, planned.ip), body: { status: { egressNode: other } } },
        merge,
      );
    }
    await custom().createClusterCustomObject({
      ...api,
      body: {
        apiVersion: `${api.group}/${api.version}`,
        kind: api.kind,
        metadata: { name: foreign },
        spec: foreignSpec(`${net}.200`, other),
      },
    });

    const run = await check("--json");
    expect(run.code).toBe(1);
    const doc = JSON.parse(run.stdout) as { findings: Finding[]; others: { ip: string; fix?: unknown }[] };
    // Antrea moves addresses itself: state only has to learn where. Cilium's gateway is re-pinned in
    // place by refresh and up (before issue 44: the delete of the namespace's whole policy first).
    expect(doc.findings).toEqual([
      {
        kind: "misplaced",
        ip: planned.ip,
        expectedHost: planned.host,
        actualHost: other,
        urn: expect.stringMatching(/EgressIpAssignment::team-x-/),
        fix: refreshUp(),
      },
    ]);
    // Somebody else's object (before issue 44: leaked, with its kubectl delete).
    expect(doc.others.filter((o) => o.ip === `${net}.200`)).toHaveLength(1);
    expect(doc.others.every((o) => o.fix === undefined)).toBe(true);
    expect(run.stdout).not.toMatch(/kubectl[^"]*delete/);

    await custom().deleteClusterCustomObject({ ...api, name: foreign }); // its owner's business; gone for the next test
    await h.refresh();
    const up = await h.up();
    if (kind === "antrea") expect(up.outputs.host!.value).toBe(other);
    const after = await check();
    expect(after.stdout).toContain("no drift");
    expect(after.code).toBe(0);
  });

  it("deleted behind the stack's back: missing, put back by refresh and up", async () => {
    const name = kind === "cilium" ? ciliumObjectName(w.ns.x) : antreaObjectName(w.ns.x, planned.ip);
    const { host } = (await h.up()).outputs;
    await custom().deleteClusterCustomObject({ ...api, name });
    const run = await check("--json");
    expect(run.code).toBe(1);
    expect((JSON.parse(run.stdout) as { findings: Finding[] }).findings).toEqual([
      {
        kind: "missing",
        ip: planned.ip,
        expectedHost: String(host!.value),
        urn: expect.stringMatching(/EgressIpAssignment::team-x-/),
        fix: refreshUp(),
      },
    ]);
    await h.refresh();
    const again = (await h.up()).outputs.host!.value;
    expect((await custom().getClusterCustomObject({ ...api, name })) as k8s.KubernetesObject).toMatchObject({
      metadata: { name },
    });
    if (kind === "antrea") {
      // A new object: Antrea's agent reports it where it was planned.
      await custom().patchClusterCustomObjectStatus(
        { ...api, name, body: { status: { egressNode: String(again) } } },
        merge,
      );
    }
    const after = await check();
    expect(after.stdout).toContain("no drift");
    expect(after.code).toBe(0);
  });
  it("a foreign object's pool address is in use by others (no delete, exit 0); a re-pinned gateway of the stack's: refresh and up, never a delete", async () => {
    const other = uniqueName("elsewhere");
    await custom().createClusterCustomObject({
      ...api,
      body: {
        apiVersion: `${api.group}/${api.version}`,
        kind: api.kind,
        metadata: { name: `${foreign}-b`, labels: { app: other } },
        spec: foreignSpec(`${net}.201`, w.node.a1),
      },
    });
    const run = await check("--json");
    expect(run.stderr).toBe("");
    const doc = JSON.parse(run.stdout) as {
      findings: Finding[];
      others: { ip: string; host: string; fix?: unknown }[];
    };
    expect(doc.findings).toEqual([]);
    // (The first test's foreign object, if its fix was not run, is in use by others too.)
    expect(doc.others).toContainEqual({
      ip: `${net}.201`,
      host: kind === "cilium" ? w.node.a1 : "(not placed yet)",
    });
    expect(run.code).toBe(0);
    const text = await check();
    expect(text.stdout).not.toContain("kubectl");
    expect(text.code).toBe(0);

    if (kind !== "cilium") return;
    const { host } = (await h.up()).outputs;
    const pinnedTo = String(host!.value);
    const moved = pinnedTo === w.node.a1 ? w.node.a2 : w.node.a1;
    const gateway = {
      nodeSelector: { matchLabels: { "kubernetes.io/hostname": moved } },
      egressIP: planned.ip,
    };
    await custom().patchClusterCustomObject(
      {
        ...api,
        name: ciliumObjectName(w.ns.x),
        body: { spec: { egressGateway: gateway, egressGateways: [gateway] } },
      },
      merge,
    );
    const misplaced = await check("--json");
    expect(misplaced.code).toBe(1);
    expect((JSON.parse(misplaced.stdout) as { findings: Finding[] }).findings).toEqual([
      {
        kind: "misplaced",
        ip: planned.ip,
        expectedHost: pinnedTo,
        actualHost: moved,
        urn: expect.stringMatching(/EgressIpAssignment::team-x-/),
        // The policy is the namespace's, shared by its gateways: refresh and up re-pin it in place.
        fix: refreshUp(),
      },
    ]);
    await h.refresh();
    await h.up();
    const after = await check();
    expect(after.stdout).toContain("no drift");
    expect(after.code).toBe(0);
  });
});
