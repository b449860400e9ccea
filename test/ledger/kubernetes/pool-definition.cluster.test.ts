// A shared pool's definition through the IpPool provider and the real kube-apiserver: the first
// stack's create writes it, a different one is refused at check naming both and the writer, growing
// is an explicit update of a pool that has the stored definition (its check writes nothing), and
// shrinking under another stack's claim is refused.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ipPoolProvider } from "../../../provider/resources/ip-pool/ip-pool-provider";
import { kubeLedger } from "../../../provider/ledger/kubernetes/kube-ledger";
import { poolChooser, resolvePool } from "../../../provider/resources/pool/pool-spec";
import { poolDefinition } from "../../../provider/resources/pool/canonical-definition";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../../support/kube";

// These stacks have no checkpoint to find their identity in (the e2e tests cover that).
vi.mock("../../../provider/ledger/stack/stack-identity", () => ({
  stackIdentity: async (stack: string) => `id-of-${stack}`,
}));

describe("shared pool definition", () => {
  let ns = "";
  const name = uniqueName("def");
  const props = (stack: string, subnet: string) => ({
    stack: `o/p/${stack}`,
    poolId: `urn:pulumi:${stack}::p::egress-ipam:IpPool::egress`,
    ranges: [{ subnet }],
    ledger: { kind: "kubernetes", name, namespace: ns, context: "admin@test" },
  });
  const reasons = (r: { failures?: { reason: string }[] }) =>
    (r.failures ?? []).map((f) => f.reason).join("; ");

  beforeAll(async () => {
    process.env.KUBECONFIG = testKubeconfig();
    ns = await freshNamespace("def");
  });
  afterAll(() => kube().core.deleteNamespace({ name: ns }));

  const stored = async () =>
    (await kube().core.readNamespacedConfigMap({ name: `${name}.pool`, namespace: ns })).data?.definition;
  const checked = async (olds: object, news: object) => {
    const r = await ipPoolProvider.check(olds, news);
    expect(reasons(r)).toBe("");
    return r.inputs!;
  };

  it("is written by the first stack's create and refused when different, naming both and the writer", async () => {
    await ipPoolProvider.create(await checked({}, props("a", "10.60.0.0/27")));
    expect(await stored()).toContain('"subnet":"10.60.0.0/27"');
    const other = reasons(await ipPoolProvider.check({}, props("b", "10.60.0.0/26")));
    expect(other).toContain('"subnet":"10.60.0.0/27"');
    expect(other).toContain('"subnet":"10.60.0.0/26"');
    expect(other).toContain("written by stack o/p/a");
    expect(reasons(await ipPoolProvider.check({}, props("b", "10.60.0.0/27")))).toBe("");
  });

  it("grows by an update of a pool that had the stored definition, not by its check; others then follow", async () => {
    const olds = await checked({}, props("a", "10.60.0.0/27"));
    const grown = await checked(olds, props("a", "10.60.0.0/26"));
    // Checked (as a preview does) but not applied: nothing changed for anyone.
    expect(await stored()).toContain('"subnet":"10.60.0.0/27"');
    await ipPoolProvider.update("egress", olds, grown);
    expect(await stored()).toContain('"subnet":"10.60.0.0/26"');
    expect(reasons(await ipPoolProvider.check({}, props("b", "10.60.0.0/27")))).toContain(
      "written by stack o/p/a",
    );
    expect(reasons(await ipPoolProvider.check({}, props("b", "10.60.0.0/26")))).toBe("");
  });

  it("refuses to shrink below another stack's claim, naming it", async () => {
    const pool = resolvePool({ ranges: [{ subnet: "10.60.0.0/26" }] }).pool!;
    const b = kubeLedger({
      stack: "o/p/b",
      ledger: {
        name,
        namespace: ns,
        context: "admin@test",
        lockDuration: 10_000,
        lockAcquireTimeout: 30_000,
      },
    });
    const owner = "urn:pulumi:b::p::egress-ipam:IpAllocation::far";
    await b.plan({ pool: "x", owner, requested: ["10.60.0.40"], choose: poolChooser(pool) });
    const shrink = reasons(
      await ipPoolProvider.check(props("a", "10.60.0.0/26"), props("a", "10.60.0.0/27")),
    );
    expect(shrink).toContain(`10.60.0.40 (held by ${owner} of stack o/p/b`);
  });

  it("a definition an earlier version stored (no owner identity) is its writer's, which records its identity at its next up", async () => {
    const legacy = uniqueName("legacy");
    const mine = { ...props("w", "10.61.0.0/28"), ledger: { ...props("w", "").ledger, name: legacy } };
    const first = await checked({}, mine);
    // What an earlier version's create left: the definition, the stack and the pool, no identity.
    await kube().core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: {
          name: `${legacy}.pool`,
          labels: { "egress-ipam/pool": legacy, "egress-ipam/role": "pool" },
        },
        data: {
          definition: poolDefinition(resolvePool({ ranges: [{ subnet: "10.61.0.0/28" }] }).pool!),
          stack: "o/p/w",
          owner: mine.poolId,
        },
      },
    });
    const olds = { ...first, ownedBy: undefined };
    const news = await checked(olds, mine);
    expect(news.ownedBy).toBe(`stack o/p/w (${mine.poolId})`);
    // State an earlier version wrote has no ownedBy: the next up is an update, which records the identity.
    expect((await ipPoolProvider.diff!("egress", olds, news)).changes).toBe(true);
    await ipPoolProvider.update!("egress", olds, news);
    const cm = await kube().core.readNamespacedConfigMap({ name: `${legacy}.pool`, namespace: ns });
    expect(cm.data?.ownerStackId).toBe("id-of-o/p/w");
    // Another stack of that name (another identity) is no owner: it may not change the definition.
    const twin = { ...mine, stackId: "another" };
    const grow = { ...twin, ranges: [{ subnet: "10.61.0.0/27" }] };
    expect(reasons(await ipPoolProvider.check({ ...news, stackId: "another" }, grow))).toContain(
      `written by stack o/p/w (${mine.poolId}), which owns it`,
    );
  });

  it("a stack that restated the stored definition cannot grow it, even by an update; quotas too are the owner's", async () => {
    const olds = await checked({}, props("b", "10.60.0.0/26"));
    expect(olds.ownedBy).toMatch(/^stack o\/p\/a /);
    const grow = reasons(await ipPoolProvider.check(olds, props("b", "10.60.0.0/25")));
    expect(grow).toContain("only the owner changes it");
    const quota = reasons(
      await ipPoolProvider.check(olds, { ...props("b", "10.60.0.0/26"), quotas: { default: 1 } }),
    );
    expect(quota).toContain("only its owner sets quotas");
  });

  it("a reference takes only its ledger, and names a pool nothing defines", async () => {
    const ref = (ledgerName: string, extra: object = {}) => ({
      stack: "o/p/t",
      poolId: "urn:pulumi:t::p::egress-ipam:IpPool::egress",
      shared: true,
      ledger: { kind: "kubernetes", name: ledgerName, namespace: ns, context: "admin@test" },
      ...extra,
    });
    const withRanges = await ipPoolProvider.check({}, ref(name, { ranges: [{ subnet: "10.9.0.0/24" }] }));
    expect(withRanges.failures?.map((f) => f.property)).toEqual(["ranges"]);
    expect(reasons(withRanges)).toContain("its owner defines ranges");
    const missing = await ipPoolProvider.check({}, ref("nothing-here"));
    expect(missing.failures?.[0]).toMatchObject({ property: "ledger", code: "NOT_FOUND" });
    expect(reasons(missing)).toContain(`no shared pool "nothing-here" in namespace "${ns}"`);
    const found = await checked({}, ref(name));
    expect([found.size, found.used, found.quota, found.ownedBy]).toEqual([
      "61",
      "0",
      undefined,
      expect.stringMatching(/^stack o\/p\/a /),
    ]);
  });
});
