// Which cluster a resource's objects are on, with the real engine and the real kube-apiserver: a
// Kubernetes provisioner (ocp-static EgressIpAssignment, ovn CidrAssignment) without a context uses
// the current one, so `kubectl config use-context` to another cluster must not redirect preview,
// refresh or destroy there. A declared `cluster` re-pins on purpose (a rotated CA).
import * as k8s from "@kubernetes/client-node";
import type { LocalWorkspace } from "@pulumi/pulumi/automation";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Harness } from "../support/harness";
import { kube, testKubeconfig } from "../support/kube";
import { hostSubnetIps, netNamespaceIps, sdnWorld, type SdnWorld } from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
const net = `10.26.${1 + Math.floor(Math.random() * 250)}`;
const assignable = "k8s.ovn.org/egress-assignable";
/**
 * A kubeconfig whose current context `admin@elsewhere` points at "another cluster": we have one, so
 * it is the test API server under a second cluster entry without its CA (TLS not verified), which
 * state tells apart as `server <url>`. Every call through it works: only the pinning refuses.
 */
function switchedKubeconfig(dir: string): string {
  const config = new k8s.KubeConfig();
  config.loadFromFile(testKubeconfig());
  const test = config.getCluster("test")!;
  config.addCluster({ name: "elsewhere", server: test.server, skipTLSVerify: true });
  config.addContext({ name: "admin@elsewhere", cluster: "elsewhere", user: "admin" });
  config.setCurrentContext("admin@elsewhere");
  const file = path.join(dir, "switched-kubeconfig");
  fs.writeFileSync(file, config.exportConfig());
  return file;
}

/** The identity state records for the "other cluster" of {@link switchedKubeconfig}. */
function otherIdentity(): string {
  const config = new k8s.KubeConfig();
  config.loadFromFile(testKubeconfig());
  return `server ${config.getCluster("test")!.server}`;
}

describe("a resource stays on the cluster it was made on", () => {
  let w: SdnWorld<"n1" | "n2", "x">;
  const harnesses: Harness[] = [];
  const stack = (project: string) => {
    const h = Harness.create(project, { env: { KUBECONFIG: testKubeconfig() } });
    harnesses.push(h);
    return h;
  };
  const failed = (p: Promise<unknown>) =>
    p.then(
      () => "succeeded",
      (e: Error) => String(e),
    );

  beforeAll(async () => {
    w = await sdnWorld({ n1: { zone: "a" }, n2: { zone: "a" } }, ["x"]);
  });
  afterAll(async () => {
    for (const h of harnesses) h.dispose();
    await w?.cleanup();
  });

  it("ocp-static: a switched context is refused at preview, refresh and destroy; a declared cluster re-pins", async () => {
    const ip = `${net}.10`;
    const h = stack("pin-static");
    const program = (cluster?: string) => async () => {
      const { EgressIpAssignment } = h.pkg<Pkg>("pulumi-egress-ipam");
      // No context: the current one decides, as with kubectl.
      const a = new EgressIpAssignment("egress", {
        ip,
        provisioner: { kind: "ocp-static", nodeSelector: w.selector, ...(cluster ? { cluster } : {}) },
        failureDomain: w.zone("a"),
        namespace: w.ns.x,
      });
      return { host: a.host };
    };
    const workspace = (await h.program(program())).workspace as LocalWorkspace;
    const host = String((await h.up()).outputs.host?.value);
    expect(await netNamespaceIps(w.ns.x)).toEqual([ip]);

    workspace.envVars.KUBECONFIG = switchedKubeconfig(path.dirname(h.checkpointFile));
    const preview = await failed(h.preview());
    expect(preview).toContain('context "admin@elsewhere"');
    expect(preview).toMatch(/on the cluster with ca sha256:[0-9a-f]{16}/);
    expect(await failed(h.refresh())).toContain("another cluster");
    expect(await failed(h.destroy())).toContain("another cluster");
    expect(await netNamespaceIps(w.ns.x)).toEqual([ip]);
    expect(await hostSubnetIps(host)).toEqual([ip]);
    const state = await h.resources();
    expect(state.find((r) => r.type.endsWith("EgressIpAssignment"))?.outputs?.host).toBe(host);

    // The same cluster after a CA rotation, as this test pretends: declaring it re-pins, an update.
    await h.program(program(otherIdentity()));
    const repin = await h.preview();
    expect(repin.op("egress")).toBe("update");
    await h.up();
    expect(await netNamespaceIps(w.ns.x)).toEqual([ip]);
    // Declared, it is refused wherever the context points elsewhere, even with no state recorded.
    workspace.envVars.KUBECONFIG = testKubeconfig();
    expect(await failed(h.preview())).toContain(`the provisioner's cluster setting says ${otherIdentity()}`);
    workspace.envVars.KUBECONFIG = switchedKubeconfig(path.dirname(h.checkpointFile));
    await h.destroy();
    expect(await netNamespaceIps(w.ns.x)).toEqual([]);
    expect(await hostSubnetIps(host)).toEqual([]);
  });

  it("ovn CidrAssignment: a switched context is refused at preview and destroy, and its labels stay", async () => {
    const h = stack("pin-cidr");
    const workspace = (
      await h.program(async () => {
        const { IpPool, CidrAssignment } = h.pkg<Pkg>("pulumi-egress-ipam");
        const pool = new IpPool("egress", { ranges: [{ subnet: `${net}.64/28` }] });
        const cidrs = new CidrAssignment("cidrs", {
          pool,
          provisioner: { kind: "ovn", nodeSelector: w.selector },
          hosts: [w.node.n1],
        });
        return { hosts: cidrs.hosts };
      })
    ).workspace as LocalWorkspace;
    await h.up();
    const labelled = async () =>
      assignable in ((await kube().core.readNode({ name: w.node.n1 })).metadata?.labels ?? {});
    expect(await labelled()).toBe(true);
    workspace.envVars.KUBECONFIG = switchedKubeconfig(path.dirname(h.checkpointFile));
    expect(await failed(h.preview())).toContain('context "admin@elsewhere"');
    expect(await failed(h.destroy())).toContain("another cluster");
    expect(await labelled()).toBe(true);
    workspace.envVars.KUBECONFIG = testKubeconfig();
    await h.destroy();
    expect(await labelled()).toBe(false);
  });
});
