// Every dynamic-provider process exits when the engine is done with it: none outlives the
// deployment that started it, for the stack ledger and for a shared pool (Lease renewal timer,
// Kubernetes client sockets), through preview, up, refresh and destroy.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Harness } from "../support/harness";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../support/kube";
import { providerProcessesDuring, providerProcessesIn } from "../support/provider-processes";

type Pkg = typeof import("../../provider/index");

describe("no dynamic-provider process outlives a deployment", () => {
  let ns = "";
  const h = Harness.create("provider-exit", { env: { KUBECONFIG: testKubeconfig() } });
  const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");

  beforeAll(async () => {
    ns = await freshNamespace("exit");
    await h.program(async () => {
      const local = new IpPool("local", { ranges: [{ subnet: "10.70.0.0/24" }] });
      const shared = new IpPool("shared", {
        ranges: [{ subnet: "10.71.0.0/24" }],
        ledger: { kind: "kubernetes", name: uniqueName("exit"), namespace: ns, context: "admin@test" },
      });
      for (let i = 0; i < 10; i++) {
        new IpAllocation(`local-${i}`, { pool: local });
        new IpAllocation(`shared-${i}`, { pool: shared });
      }
    });
  });
  afterAll(async () => {
    h.dispose();
    await kube().core.deleteNamespace({ name: ns });
  });

  it.each([
    ["preview", () => h.preview()],
    ["up", () => h.up()],
    ["refresh", () => h.refresh()],
    ["destroy", () => h.destroy()],
  ])("%s: a provider process ran, and none is left when it returns", async (_, operation) => {
    const seen = await providerProcessesDuring(h.workDir, operation);
    // The detector saw the provider while it ran, so the check below can fail.
    expect(seen.size).toBeGreaterThan(0);
    expect(providerProcessesIn(h.workDir)).toEqual([]);
  });
});
