// A YAML program using this package through its plugin (`npm run sdks`, `pulumi plugin install`),
// run with the real engine and the YAML language host: preview lists every address and up creates
// exactly those, a second up changes nothing, a new holder moves none, an input error and two
// unordered new holders are refused at preview naming the property, refresh finds a hand-deleted
// claim of a shared pool (test cluster) and up puts it back, and destroy leaves nothing. A
// TypeScript stack (dynamic resources) and a YAML stack (the plugin's) racing on one shared pool
// get distinct addresses.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";
import { pluginProject, writeProjectFile } from "../support/plugin-project";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../support/kube";

type Pkg = typeof import("../../provider/index");

/** A YAML program: an IpPool and a chain of IpAllocations (`names`, each after the one before). */
function yamlProgram(names: string[], pool: Record<string, unknown>, extra = ""): string {
  const lines = [
    "name: plugin-yaml",
    "runtime: yaml",
    "resources:",
    "  pool:",
    "    type: egress-ipam:IpPool",
    // YAML takes JSON as it is.
    `    properties: ${JSON.stringify(pool)}`,
  ];
  names.forEach((n, i) => {
    lines.push(`  ${n}:`, "    type: egress-ipam:IpAllocation", "    properties:", "      pool: ${pool}");
    if (i > 0) lines.push(`      after: \${${names[i - 1]}}`);
  });
  lines.push(extra, "outputs:", ...names.map((n) => `  ${n}: \${${n}.ip}`));
  return `${lines.join("\n")}\n`;
}

const plainPool = { ranges: [{ subnet: "10.0.8.0/24", rangeStart: "10.0.8.10" }] };
const consumer = () => {
  const dir = process.env.EGRESS_IPAM_CONSUMER;
  if (!dir) throw new Error("EGRESS_IPAM_CONSUMER is not set: run through vitest's cluster project");
  return dir;
};
const outputsOf = (o: Record<string, { value: unknown }>) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v.value]));
const planned = (p: { planned(n: string): Record<string, unknown> | undefined }, names: string[]) =>
  Object.fromEntries(names.map((n) => [n, p.planned(n)?.ip]));

describe("a YAML program through the egress-ipam plugin", () => {
  const harnesses: Harness[] = [];
  afterAll(() => {
    for (const h of harnesses) h.dispose();
  });
  const project = (files: Record<string, string>, env: Record<string, string> = {}) => {
    const h = pluginProject(consumer(), "plugin-yaml", files, { env });
    harnesses.push(h);
    return h;
  };

  it("preview lists every address, up creates exactly those, a second up changes nothing, a new holder moves none, destroy leaves nothing", async () => {
    const names = ["web", "api", "db"];
    const h = project({ "Pulumi.yaml": yamlProgram(names, plainPool) });
    await h.project();
    const preview = await h.preview();
    expect(planned(preview, names)).toEqual({ web: "10.0.8.10", api: "10.0.8.11", db: "10.0.8.12" });
    const up = await h.up();
    expect(outputsOf(up.outputs)).toEqual(planned(preview, names));
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
    expect(changesOf((await h.up()).summary.resourceChanges as Record<string, number>)).toEqual({});

    // A new holder first in the file, after the last one: the others keep their addresses.
    writeProjectFile(h, "Pulumi.yaml", yamlProgram([...names, "cache"], plainPool));
    const grown = await h.preview();
    expect(grown.op("cache")).toBe("create");
    expect(grown.op("web")).toBe("same");
    expect(grown.planned("cache")?.ip).toBe("10.0.8.13");
    const up2 = await h.up();
    expect(outputsOf(up2.outputs)).toEqual({
      web: "10.0.8.10",
      api: "10.0.8.11",
      db: "10.0.8.12",
      cache: "10.0.8.13",
    });

    await h.destroy();
    expect(await h.resources()).toEqual([]);
  });

  it("refuses at preview an input error, naming the property, and two new holders nothing orders, naming both", async () => {
    const bad = project({
      "Pulumi.yaml": yamlProgram(["web"], { ranges: [{ subnet: "10.0.8.0/24" }], strategy: "random" }),
    });
    await bad.project();
    const err = String(await bad.preview().catch((e: Error) => e));
    expect(err).toMatch(/strategy/);
    expect(err).toMatch(/random/);

    const unordered = project({
      "Pulumi.yaml": yamlProgram(
        ["web"],
        plainPool,
        "  api:\n    type: egress-ipam:IpAllocation\n    properties:\n      pool: ${pool}",
      ),
    });
    await unordered.project();
    const race = String(await unordered.preview().catch((e: Error) => e));
    expect(race).toMatch(
      /\[INVALID_CONFIG\] (api and web|web and api) both take a new address from pool pool/,
    );
    expect(race).toMatch(/Set after: (web on api|api on web)/);
  });

  describe("with a pool shared through the test cluster's ledger", () => {
    let ns = "";
    const pool = uniqueName("plugin");
    const ledger = () => ({ kind: "kubernetes" as const, name: pool, namespace: ns, context: "admin@test" });
    beforeAll(async () => {
      ns = await freshNamespace("plugin");
    });
    afterAll(async () => {
      await kube().core.deleteNamespace({ name: ns });
    });
    const claims = async () =>
      (
        await kube().core.listNamespacedConfigMap({
          namespace: ns,
          labelSelector: `egress-ipam/pool=${pool},egress-ipam/role=claim`,
        })
      ).items.filter((c) => c.data?.state === "claim"); // not the holds of a preview

    it("a TypeScript stack and a YAML stack racing up get distinct addresses; refresh finds a hand-deleted claim and up puts it back; a YAML tenant takes the pool as stored", async () => {
      const shared = { ranges: [{ subnet: "10.60.0.0/27" }], ledger: ledger() };
      const names = Array.from({ length: 10 }, (_, i) => `y${i}`);
      const yaml = project({ "Pulumi.yaml": yamlProgram(names, shared) }, { KUBECONFIG: testKubeconfig() });
      await yaml.project();
      const ts = Harness.create("plugin-ts", { env: { KUBECONFIG: testKubeconfig() } });
      harnesses.push(ts);
      const { IpPool, IpAllocation } = ts.pkg<Pkg>("pulumi-egress-ipam");
      await ts.program(async () => {
        const p = new IpPool("pool", shared);
        return Object.fromEntries(
          Array.from({ length: 10 }, (_, i) => [`t${i}`, new IpAllocation(`t${i}`, { pool: p }).ip]),
        );
      });
      const [uy, ut] = await Promise.all([yaml.up({ parallel: 16 }), ts.up({ parallel: 16 })]);
      const all = [...Object.values(outputsOf(uy.outputs)), ...Object.values(outputsOf(ut.outputs))];
      expect(new Set(all).size).toBe(20);
      expect(await claims()).toHaveLength(20);

      const y0 = String(uy.outputs.y0?.value);
      const mine = (await claims()).find((cm) => cm.data?.address === y0);
      expect(mine, `the claim of ${y0}`).toBeDefined();
      await kube().core.deleteNamespacedConfigMap({ name: mine!.metadata!.name!, namespace: ns });
      await yaml.refresh();
      const lost = (await yaml.resources()).filter((r) => r.outputs?.claim !== undefined);
      expect(lost.map((r) => r.urn.split("::").at(-1))).toEqual(["y0"]);
      expect(String(lost[0]?.outputs?.claim)).toContain("no claim");
      expect((await yaml.preview()).op("y0")).toBe("update");
      await yaml.up();
      expect((await claims()).map((cm) => cm.data?.address)).toContain(y0);
      expect(await claims()).toHaveLength(20);
      expect(changesOf((await yaml.preview()).changeSummary)).toEqual({});

      // A tenant's YAML stack takes the pool as stored (shared: true, only the ledger): the next free address.
      const tenant = project(
        { "Pulumi.yaml": yamlProgram(["tenant"], { shared: true, ledger: ledger() }) },
        { KUBECONFIG: testKubeconfig() },
      );
      await tenant.project();
      const planned = String((await tenant.preview()).planned("tenant")?.ip);
      expect(all).not.toContain(planned);
      expect(planned).toMatch(/^10\.60\.0\.\d+$/);
      expect((await tenant.up()).outputs.tenant?.value).toBe(planned);
      await tenant.destroy();

      await Promise.all([yaml.destroy(), ts.destroy()]);
      expect(await claims()).toHaveLength(0);
    });
  });
});
