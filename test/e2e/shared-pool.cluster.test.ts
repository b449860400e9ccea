// Pools shared across stacks through the Kubernetes ledger, with the real engine and the real
// kube-apiserver: concurrent `up`s of two stacks fill one /27 without a duplicate, a third stack is
// refused at preview and succeeds after a destroy, a different definition is refused at preview.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeClients } from "../../provider/kube/kube-config";
import { ClaimStore } from "../../provider/ledger/kubernetes/claim-store";
import { Harness } from "../support/harness";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../support/kube";

type Pkg = typeof import("../../provider/index");

describe("a pool shared by stacks through a Kubernetes ledger", () => {
  let ns = "";
  const pool = uniqueName("egress");
  const harnesses: Harness[] = [];
  const stack = (project: string) => {
    const h = Harness.create(project, { env: { KUBECONFIG: testKubeconfig() } });
    harnesses.push(h);
    return h;
  };
  const program = (h: Harness, names: string[], subnet = "10.50.0.0/27", context = "admin@test") => {
    const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
    return async () => {
      const p = new IpPool("egress", {
        ranges: [{ subnet }],
        ledger: { kind: "kubernetes", name: pool, namespace: ns, context, lockDuration: "5s" },
      });
      return Object.fromEntries(names.map((n) => [n, new IpAllocation(n, { pool: p }).ip]));
    };
  };
  const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  const ipsOf = (outputs: Record<string, { value: unknown }>) =>
    Object.values(outputs).map((o) => String(o.value));

  const a = stack("shared-a");
  const b = stack("shared-b");
  const c = stack("shared-c");

  beforeAll(async () => {
    ns = await freshNamespace("shared");
  });
  afterAll(async () => {
    for (const h of harnesses) h.dispose();
    await kube().core.deleteNamespace({ name: ns });
  });

  it("two stacks racing `up` both succeed and together fill the /27 with distinct addresses", async () => {
    await a.program(program(a, names("a", 15)));
    await b.program(program(b, names("b", 14)));
    const [ua, ub] = await Promise.all([a.up({ parallel: 8 }), b.up({ parallel: 8 })]);
    const all = [...ipsOf(ua.outputs), ...ipsOf(ub.outputs)];
    expect(new Set(all).size).toBe(29);
    expect(all.every((ip) => /^10\.50\.0\.([2-9]|[12]\d|30)$/.test(ip))).toBe(true);
    const claims = await kube().core.listNamespacedConfigMap({
      namespace: ns,
      labelSelector: `egress-ipam/pool=${pool},egress-ipam/role=claim`,
    });
    expect(claims.items.map((cm) => cm.data?.state)).toEqual(Array(29).fill("claim"));
  });

  it("a third stack is refused at preview with POOL_EXHAUSTED naming the pool", async () => {
    await c.program(program(c, ["c-0"]));
    const err = await c.preview().catch((e: Error) => e);
    expect(String(err)).toContain("no free address");
    expect(String(err)).toContain(`shared pool "${pool}"`);
  });

  it("after one stack's destroy, the third stack's preview shows an address and up gets it", async () => {
    const before = await a.resources();
    const freed = before.filter((r) => r.type.endsWith("IpAllocation")).map((r) => String(r.outputs?.ip));
    await a.destroy();
    const preview = await c.preview();
    const planned = String(preview.planned("c-0")?.ip);
    expect(freed).toContain(planned);
    const up = await c.up();
    expect(up.outputs["c-0"]?.value).toBe(planned);
  });

  it("refuses a stack whose definition differs at preview, naming both and the writer stack", async () => {
    const d = stack("shared-d");
    await d.program(program(d, ["d-0"], "10.50.0.0/26"));
    const err = String(await d.preview().catch((e: Error) => e));
    expect(err).toContain("10.50.0.0/27");
    expect(err).toContain("10.50.0.0/26");
    expect(err).toMatch(/written by stack organization\/shared-[ab]\/test/);
  });

  it("fails at preview naming the server, the namespace and the missing permission when access is forbidden", async () => {
    const e = stack("shared-e");
    await e.program(program(e, ["e-0"], "10.50.0.0/27", "limited@test"));
    const err = String(await e.preview().catch((x: Error) => x));
    expect(err).toMatch(/https:\/\/127\.0\.0\.1:\d+/);
    expect(err).toContain(`namespace "${ns}"`);
    expect(err).toMatch(/User "limited" cannot get resource "configmaps"/);
  });

  it("a claim left by a killed create is reported by refresh and taken back by the same resource's next up", async () => {
    const f = stack("shared-f");
    const { IpPool, IpAllocation } = f.pkg<Pkg>("pulumi-egress-ipam");
    const ledger = {
      kind: "kubernetes" as const,
      name: uniqueName("rec"),
      namespace: ns,
      context: "admin@test",
    };
    const poolOnly = async () => void new IpPool("egress", { ranges: [{ subnet: "10.51.0.0/27" }], ledger });
    await f.program(poolOnly);
    await f.up();
    // What a provider killed after writing the claim (before the engine recorded the create) leaves.
    const owner = `urn:pulumi:test::shared-f::pulumi-nodejs:dynamic/egress-ipam:IpAllocation::f-0`;
    process.env.KUBECONFIG = testKubeconfig();
    const store = new ClaimStore(kubeClients({ context: "admin@test" }), ns, ledger.name);
    await store.create("10.51.0.9", { state: "claim", stack: f.fqStackName, owner, seq: 1, expires: 0 });
    await f.refresh();
    const pool = (await f.resources()).find((r) => r.type.endsWith("IpPool"));
    expect(pool?.outputs?.allocations).toEqual([{ ip: "10.51.0.9", owner }]);
    await f.program(async () => {
      const p = new IpPool("egress", { ranges: [{ subnet: "10.51.0.0/27" }], ledger });
      return { ip: new IpAllocation("f-0", { pool: p }).ip };
    });
    const up = await f.up();
    expect(up.outputs.ip?.value).toBe("10.51.0.9");
    expect((await store.list()).map((c) => [c.ip, c.state, c.owner])).toEqual([
      ["10.51.0.9", "claim", owner],
    ]);
    await f.destroy();
    expect(await store.list()).toEqual([]);
  });
});
