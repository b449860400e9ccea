// What the platform itself says about an address (ovnkube's EgressIP `status.items` and Warning
// events, Antrea's Egress `status`), read by refresh (checkIP) and by `pulumi-egress-ipam check`: the
// real Pulumi engine against the real kube-apiserver. No ovnkube or Antrea runs there: the test
// writes and clears the status fields and events as they would.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { antreaObjectName } from "../../provider/provisioners/kubernetes/antrea/antrea";
import type { Finding } from "../../provider/cli/drift";
import { runCli } from "../support/cli";
import { changesOf, Harness } from "../support/harness";
import { kube, testKubeconfig, uniqueName } from "../support/kube";
import { sdnWorld, type SdnWorld } from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
// Subnets of their own (10.41.x): egress addresses anywhere in the shared cluster count as taken.
const octet = 1 + Math.floor(Math.random() * 120);
const [ovnNet, antreaNet] = [`10.41.${octet * 2}`, `10.41.${octet * 2 + 1}`];

interface CheckJson {
  findings: Finding[];
  platform: { ip: string; host: string; state: string; node?: string; why?: string }[];
}

/** The outputs of the stack's one EgressIpAssignment, as state has them. */
async function assignmentOutputs(h: Harness) {
  const r = (await h.resources()).find((x) => x.type.endsWith("EgressIpAssignment"))!;
  return r.outputs as { host: string; placement?: { state: string; from: string; reason: string } };
}

describe("the platform's own status of an ovn address, against kube-apiserver", () => {
  const h = Harness.create("status-ovn", { env: { KUBECONFIG: testKubeconfig() } });
  const { IpPool, EgressIp, CidrAssignment } = h.pkg<Pkg>("pulumi-egress-ipam");
  let w: SdnWorld<"a1" | "a2", "x">;
  let planned = { ip: "", host: "" };
  const events: string[] = [];
  const check = (...args: string[]) => runCli(["check", "--stack", h.fqStackName, ...args], h.env);
  const ref = () => ({
    apiVersion: "k8s.ovn.org/v1",
    kind: "EgressIP",
    metadata: { name: `egress-ipam-${w.ns.x}` },
  });
  const read = () => kube().objects.read(ref()) as Promise<k8s.KubernetesObject & { status?: unknown }>;
  /** Writes status as ovnkube does: a whole-object update (there is no status subresource). */
  const setStatus = async (status: unknown) => {
    const o = await read();
    await kube().objects.replace({ ...o, status } as k8s.KubernetesObject);
  };

  beforeAll(async () => {
    const node = {
      zone: "a",
      hostSubnet: false as const,
      annotations: {
        "cloud.network.openshift.io/egress-ipconfig": JSON.stringify([
          { interface: "eth0", ifaddr: { ipv4: `${ovnNet}.0/24` }, capacity: { ipv4: 8 } },
        ]),
      },
    };
    w = await sdnWorld({ a1: node, a2: node }, ["x"], { netNamespaces: false });
    await h.program(async () => {
      const provisioner = { kind: "ovn" as const, nodeSelector: w.selector };
      const pool = new IpPool("egress", {
        ranges: [{ subnet: `${ovnNet}.0/24`, rangeStart: `${ovnNet}.10` }],
      });
      new CidrAssignment("assignable", { pool, provisioner, failureDomain: w.zone("a") });
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
  });
  afterAll(async () => {
    await h.destroy().catch(() => undefined);
    h.dispose();
    for (const name of events)
      await kube()
        .core.deleteNamespacedEvent({ name, namespace: "default" })
        .catch(() => undefined);
    await w?.cleanup();
  });

  it("no status yet (ovnkube has not reported): refresh finds nothing; check says the platform has not confirmed it", async () => {
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({});
    const run = await check();
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("no drift");
    expect(run.stdout).toContain(`${planned.ip}  on ${planned.host}: not confirmed by the platform`);
  });

  it("ovnkube's Warning event and no status (it could not place the address): refresh records it missing, naming why; check reports it unplaced", async () => {
    // What ovnkube's cluster manager records when no Node may carry the address: an event on the
    // EgressIP (in namespace default: the object is cluster-scoped), and no status.
    const name = uniqueName("eip-warning");
    events.push(name);
    const now = new Date();
    await kube().core.createNamespacedEvent({
      namespace: "default",
      body: {
        metadata: { name, namespace: "default" },
        involvedObject: { kind: "EgressIP", name: `egress-ipam-${w.ns.x}` },
        reason: "NoMatchingNodeFound",
        message: `no assignable nodes for EgressIP: egress-ipam-${w.ns.x}, please tag at least one node with label: k8s.ovn.org/egress-assignable`,
        type: "Warning",
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
        source: { component: "ovnkube-cluster-manager" },
      },
    });
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({ update: 1 });
    const out = await assignmentOutputs(h);
    expect(out).toMatchObject({ host: "", placement: { state: "missing", from: planned.host } });
    expect(out.placement!.reason).toContain(
      `OVN-Kubernetes has not assigned egress IP ${planned.ip} to any node`,
    );
    expect(out.placement!.reason).toContain("NoMatchingNodeFound: no assignable nodes for EgressIP");

    const run = await check("--json");
    expect(run.code).toBe(1);
    const doc = JSON.parse(run.stdout) as CheckJson;
    expect(doc.findings).toEqual([
      expect.objectContaining({ kind: "unplaced", ip: planned.ip, expectedHost: planned.host }),
    ]);
    expect(doc.findings[0]!.reason).toContain("NoMatchingNodeFound");
    expect(doc.platform).toEqual([expect.objectContaining({ ip: planned.ip, state: "unplaced" })]);
    const text = (await check()).stdout;
    expect(text).toContain(
      `unplaced (where state says, but the platform reports it on no node): 1\n` +
        `  ${planned.ip}  on ${planned.host}: no status.items; Warning events: NoMatchingNodeFound: no assignable nodes for EgressIP`,
    );
  });

  it("placed by ovnkube (status.items): up keeps it, refresh finds nothing; check says where the platform put it", async () => {
    const up = await h.up();
    const host = String(up.outputs.host!.value);
    await setStatus({ items: [{ node: host, egressIP: planned.ip }] });
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({});
    const run = await check();
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`${planned.ip}  on ${host}: placed by the platform on node ${host}`);
    planned.host = host;
  });

  it("a status that no longer lists the address (ovnkube took it off every node): drift at refresh; check reports it unplaced", async () => {
    await setStatus({ items: [] });
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({ update: 1 });
    const run = await check("--json");
    expect(run.code).toBe(1);
    const doc = JSON.parse(run.stdout) as CheckJson;
    expect(doc.findings).toEqual([expect.objectContaining({ kind: "unplaced", ip: planned.ip })]);
    expect(doc.findings[0]!.reason).toContain("status.items: none");
  });
});

describe("the platform's own status of an antrea address, against kube-apiserver", () => {
  const h = Harness.create("status-antrea", { env: { KUBECONFIG: testKubeconfig() } });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  let w: SdnWorld<"a1", "x">;
  let planned = { ip: "", host: "" };
  const check = (...args: string[]) => runCli(["check", "--stack", h.fqStackName, ...args], h.env);
  const custom = () => kube().config.makeApiClient(k8s.CustomObjectsApi);
  /** Writes status as antrea-controller and the agents do, through the status subresource. */
  const setStatus = (status: unknown) =>
    custom().patchClusterCustomObjectStatus(
      {
        group: "crd.antrea.io",
        version: "v1beta1",
        plural: "egresses",
        name: antreaObjectName(w.ns.x, planned.ip),
        body: { status },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );

  beforeAll(async () => {
    w = await sdnWorld({ a1: { zone: "a", hostSubnet: false } }, ["x"], { netNamespaces: false });
    await h.program(async () => {
      const pool = new IpPool("egress", { ranges: [{ subnet: `${antreaNet}.0/28` }] });
      const e = new EgressIp("team", {
        pool,
        namespace: w.ns.x,
        failureDomains: [w.zone("a")],
        provisioner: { kind: "antrea", nodeSelector: w.selector, externalIPPool: "egress-pool" },
      });
      return { ip: e.ips.apply((l) => l[0]), host: e.hosts.apply((l) => l[0]) };
    });
    const up = await h.up();
    planned = { ip: String(up.outputs.ip!.value), host: String(up.outputs.host!.value) };
  });
  afterAll(async () => {
    await h.destroy().catch(() => undefined);
    h.dispose();
    await w?.cleanup();
  });

  it("no status yet (Antrea has not reported): refresh finds nothing; check says the platform has not confirmed it", async () => {
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({});
    const run = await check();
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`${planned.ip}  on ${planned.host}: not confirmed by the platform`);
  });

  it("Antrea's status says it could not assign the address: refresh records it missing with Antrea's reason; check reports it unplaced", async () => {
    const at = new Date().toISOString();
    await setStatus({
      egressIP: planned.ip,
      conditions: [
        { type: "IPAllocated", status: "True", reason: "Allocated", lastTransitionTime: at },
        {
          type: "IPAssigned",
          status: "False",
          reason: "AssignmentError",
          message: "no Node selected by ExternalIPPool egress-pool is ready",
          lastTransitionTime: at,
        },
      ],
    });
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({ update: 1 });
    const out = await assignmentOutputs(h);
    expect(out.placement!.reason).toContain(
      "IPAssigned False: AssignmentError (no Node selected by ExternalIPPool egress-pool is ready)",
    );
    const run = await check("--json");
    expect(run.code).toBe(1);
    const doc = JSON.parse(run.stdout) as CheckJson;
    expect(doc.findings).toEqual([expect.objectContaining({ kind: "unplaced", ip: planned.ip })]);
    expect(doc.findings[0]!.reason).toContain("AssignmentError");
  });

  it("placed by Antrea (status.egressNode): refresh after up finds nothing; check says where", async () => {
    const host = String((await h.up()).outputs.host!.value);
    await setStatus({
      egressNode: host,
      conditions: [
        {
          type: "IPAssigned",
          status: "True",
          reason: "Assigned",
          lastTransitionTime: new Date().toISOString(),
        },
      ],
    });
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({});
    const run = await check();
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`${planned.ip}  on ${host}: placed by the platform on node ${host}`);
  });
});
