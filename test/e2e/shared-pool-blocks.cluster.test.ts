// Blocks of a pool shared by stacks through the Kubernetes ledger, with the real engine and the real
// kube-apiserver: two stacks racing `up` for /26s and /27s of a range of one /24 (of a /23 whose
// gateway is outside it) both succeed, never overlap, never leave the range and together fill it; a
// third is refused at preview, and so is a block outside the range; destroys leave no claim and no
// marker behind.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePrefix } from "../../provider/allocator/prefix";
import { changesOf, Harness } from "../support/harness";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../support/kube";

type Pkg = typeof import("../../provider/index");

describe("blocks of a pool shared by stacks", () => {
  let ns = "";
  const pool = uniqueName("blocks");
  const harnesses: Harness[] = [];
  const stack = (project: string) => {
    const h = Harness.create(project, { env: { KUBECONFIG: testKubeconfig() } });
    harnesses.push(h);
    return h;
  };
  const program = (h: Harness, lengths: Record<string, number>, cidrs: Record<string, string> = {}) => {
    const { IpPool, PrefixAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
    return async () => {
      const p = new IpPool("blocks", {
        // Blocks come from between rangeStart and rangeEnd only (issue #56): 10.70.1.0/24.
        ranges: [
          { subnet: "10.70.0.0/23", rangeStart: "10.70.1.0", rangeEnd: "10.70.1.255", gateway: "10.70.0.1" },
        ],
        strategy: "lowest-free",
        prefixLengths: { min: 24, max: 27 },
        ledger: { kind: "kubernetes", name: pool, namespace: ns, context: "admin@test", lockDuration: "5s" },
      });
      return Object.fromEntries([
        ...Object.entries(lengths).map(([n, prefixLength]) => [
          n,
          new PrefixAllocation(n, { pool: p, prefixLength }).cidr,
        ]),
        ...Object.entries(cidrs).map(([n, cidr]) => [n, new PrefixAllocation(n, { pool: p, cidr }).cidr]),
      ]);
    };
  };
  const objects = async () =>
    (await kube().core.listNamespacedConfigMap({ namespace: ns, labelSelector: `egress-ipam/pool=${pool}` }))
      .items;

  const a = stack("blocks-a");
  const b = stack("blocks-b");
  const c = stack("blocks-c");

  beforeAll(async () => {
    ns = await freshNamespace("blocks");
  });
  afterAll(async () => {
    for (const h of harnesses) h.dispose();
    await kube().core.deleteNamespace({ name: ns });
  });

  it("two stacks racing `up` for /26s and /27s both succeed, never overlap, and fill the range", async () => {
    await a.program(program(a, { "a-0": 26, "a-1": 26 }));
    await b.program(program(b, { "b-0": 27, "b-1": 27, "b-2": 27, "b-3": 27 }));
    const [ua, ub] = await Promise.all([a.up({ parallel: 8 }), b.up({ parallel: 8 })]);
    const blocks = [...Object.values(ua.outputs), ...Object.values(ub.outputs)].map((o) => String(o.value));
    expect(blocks).toHaveLength(6);
    const spans = blocks.map((x) => parsePrefix(x)).sort((x, y) => (x.network < y.network ? -1 : 1));
    // Sorted, each begins right after the one before: no overlap, no gap, from 10.70.1.0 to .255.
    expect(spans[0]!.network).toBe(parsePrefix("10.70.1.0/24").network);
    for (let i = 1; i < spans.length; i++) expect(spans[i]!.network).toBe(spans[i - 1]!.last + 1n);
    expect(spans.at(-1)!.last).toBe(parsePrefix("10.70.1.0/24").last);
  });

  it("a third stack is refused at preview with POOL_EXHAUSTED naming the pool", async () => {
    await c.program(program(c, { "c-0": 27 }));
    const err = String(await c.preview().catch((e: Error) => e));
    expect(err).toContain("[POOL_EXHAUSTED]");
    expect(err).toContain("no free /27 block");
  });

  it("a second up of each stack changes nothing", async () => {
    for (const h of [a, b]) expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("after one stack's destroy the third gets a block, and the last destroys leave no object", async () => {
    await a.destroy();
    const up = await c.up();
    expect(String(up.outputs["c-0"]?.value)).toMatch(/^10\.70\.1\.(0|64|128|192|32|96|160|224)\/27$/);
    await b.destroy();
    await c.destroy();
    // Claims and markers alike: only the pool's definition stays.
    expect((await objects()).map((o) => o.metadata?.labels?.["egress-ipam/role"])).toEqual(["pool"]);
  });

  it("refuses at preview a new cidr overlapping the block it replaces; removing it first, then asking, works", async () => {
    const d = stack("blocks-d");
    await d.program(program(d, {}, { net: "10.70.1.0/25" }));
    expect((await d.up()).outputs.net?.value).toBe("10.70.1.0/25");
    await d.program(program(d, {}, { net: "10.70.1.0/26" }));
    const err = String(await d.preview().catch((e: Error) => e));
    expect(err).toContain("[IP_UNAVAILABLE]");
    expect(err).toMatch(/10\.70\.1\.0\/25/);
    await d.program(program(d, {}));
    await d.up();
    await d.program(program(d, {}, { net: "10.70.1.0/26" }));
    expect((await d.up()).outputs.net?.value).toBe("10.70.1.0/26");
    await d.destroy();
  });

  it("a tenant's blocks come from the stored range too: an automatic one inside it, one outside it refused at preview", async () => {
    // IpPool.shared plans from the definition the owner stored, not from a spec of its own.
    const e = stack("blocks-e");
    const tenant = (blocks: Record<string, { cidr?: string; prefixLength?: number }>) => {
      const { IpPool, PrefixAllocation } = e.pkg<Pkg>("pulumi-egress-ipam");
      return async () => {
        const ledger = { kind: "kubernetes" as const, name: pool, namespace: ns, context: "admin@test" };
        const p = IpPool.shared("blocks", { ledger });
        return Object.fromEntries(
          Object.entries(blocks).map(([n, args]) => [n, new PrefixAllocation(n, { pool: p, ...args }).cidr]),
        );
      };
    };
    await e.program(tenant({ auto: { prefixLength: 26 }, low: { cidr: "10.70.0.0/26" } }));
    const err = String(await e.preview().catch((x: Error) => x));
    expect(err).toContain(
      "[NOT_IN_RANGE] block 10.70.0.0/26 is not inside one range of range set 10.70.1.0-10.70.1.255: a block " +
        "is carved from between a range's rangeStart and rangeEnd; ask for a block inside one, or widen the range",
    );
    await e.program(tenant({ auto: { prefixLength: 26 } }));
    expect((await e.preview()).planned("auto")?.cidr).toBe("10.70.1.0/26");
    expect((await e.up()).outputs.auto?.value).toBe("10.70.1.0/26");
    await e.destroy();
  });
});
