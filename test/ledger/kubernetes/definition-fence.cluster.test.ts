// The fence between a shared pool's owner changing its definition and a tenant's holds (issue #56
// item 1), against the real kube-apiserver: a hold records the definition it was planned under and
// is claimed only under that definition; a hold that has lapsed (or nearly) is claimed under the
// pool's Lease, which the owner's change (list of holders, then write) holds too.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeClients, type KubeClients } from "../../../provider/kube/kube-config";
import { kubeLedger, type KubeLedger } from "../../../provider/ledger/kubernetes/kube-ledger";
import { PoolDefinitions } from "../../../provider/ledger/kubernetes/pool-definition";
import { definitionMark } from "../../../provider/ledger/kubernetes/definition-mark";
import { poolChooser, resolvePool, type PoolSpec } from "../../../provider/resources/pool/pool-spec";
import { poolDefinition } from "../../../provider/resources/pool/canonical-definition";
import { freshNamespace, kube, testKubeconfig } from "../../support/kube";
import { uniqueName } from "../../support/kube";

const admin = (): KubeClients => {
  process.env.KUBECONFIG = testKubeconfig();
  return kubeClients({ context: "admin@test" });
};
const urn = (name: string) => `urn:pulumi:t::p::egress-ipam:IpAllocation::${name}`;
const errorOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as { code: string; message: string },
  );
const v1: PoolSpec = { ranges: [{ subnet: "10.47.0.0/28" }] };
const v2: PoolSpec = { ...v1, exclude: ["10.47.0.14"] };
const text = (spec: PoolSpec) => poolDefinition(resolvePool(spec).pool!);

describe("a shared pool's definition fences its tenants' holds", () => {
  let ns = "";
  beforeAll(async () => {
    ns = await freshNamespace("fence");
  });
  afterAll(() => kube().core.deleteNamespace({ name: ns }));

  const config = (name: string) => ({
    name,
    namespace: ns,
    lockDuration: 10_000,
    lockAcquireTimeout: 60_000,
  });
  const define = (name: string, spec: PoolSpec) =>
    new PoolDefinitions(config(name), admin()).agree({
      definition: text(spec),
      stack: "o/net/prod",
      owner: "urn:pool",
      stackId: "id-owner",
    });
  const tenant = (name: string): KubeLedger =>
    kubeLedger({ stack: "o/p/t", stackId: "id-t", clients: admin(), ledger: config(name) });
  const request = (spec: PoolSpec) => ({
    pool: "x",
    owner: urn("web"),
    choose: poolChooser(resolvePool(spec).pool!),
    definition: text(spec),
  });

  it("a hold planned under a definition the owner changed since is not claimed; planned again, it is", async () => {
    const pool = uniqueName("fence");
    await define(pool, v1);
    const t = tenant(pool);
    const planned = await t.plan(request(v1));
    expect((await t.store.read(planned.ips[0]!))?.definition).toBe(definitionMark(text(v1)));
    // The tenant's check read v1 and wrote its hold; the owner wrote v2 before the tenant's create.
    await define(pool, v2);
    const err = await errorOf(t.reserve("x", urn("web"), planned));
    expect(err?.code).toBe("POOL_CHANGED");
    expect(err?.message).toContain(`address ${planned.ips[0]} in pool "${pool}"`);
    expect(err?.message).toContain("stack o/net/prod (urn:pool) changed since");
    expect(err?.message).toContain("run the update again");
    expect((await t.store.read(planned.ips[0]!))?.state).toBe("hold");
    // The next check reads v2: the hold is renewed under it and claimed.
    const again = await t.plan(request(v2));
    expect(again.ips).toEqual(planned.ips);
    await t.reserve("x", urn("web"), again);
    expect((await t.store.read(planned.ips[0]!))?.state).toBe("claim");
  });

  it("a lapsed hold is claimed under the Lease: the owner's change made under it first is seen", async () => {
    const pool = uniqueName("fence");
    await define(pool, v1);
    const t = tenant(pool);
    const planned = await t.plan(request(v1));
    const hold = (await t.store.read(planned.ips[0]!))!;
    const { ip: _ip, resourceVersion: _rv, uid: _uid, created: _c, ...fields } = hold;
    await t.store.replace(hold, { ...fields, expires: Date.now() - 60_000 });
    // The owner holds the Lease: it lists the live holders (the lapsed hold is not among them) and
    // writes v2; the tenant's claim waits for it, then sees v2.
    let release = () => {};
    const owner = tenant(pool);
    const holding = new Promise<void>((held) => {
      void owner.withPoolLock(async () => {
        held();
        await new Promise<void>((r) => (release = r));
        expect((await owner.holders("x")).has(planned.ips[0]!)).toBe(false);
        await define(pool, v2);
      });
    });
    await holding;
    const claimed = errorOf(t.reserve("x", urn("web"), planned));
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await t.store.read(planned.ips[0]!))?.state).toBe("hold"); // still waiting for the Lease
    release();
    expect((await claimed)?.code).toBe("POOL_CHANGED");
    expect((await t.store.read(planned.ips[0]!))?.state).toBe("hold");
  });

  it("a hold without a mark (of an earlier version, or of the owner's own stack) is claimed as before", async () => {
    const pool = uniqueName("fence");
    await define(pool, v1);
    const t = tenant(pool);
    const { definition: _d, ...unmarked } = request(v1);
    const planned = await t.plan(unmarked);
    expect((await t.store.read(planned.ips[0]!))?.definition).toBeUndefined();
    await define(pool, v2);
    await t.reserve("x", urn("web"), planned);
    expect((await t.store.read(planned.ips[0]!))?.state).toBe("claim");
  });
});
