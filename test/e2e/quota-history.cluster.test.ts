// Quotas of a shared pool over time, with the real engine and the real kube-apiserver (issue 56,
// item 2): what a group held comes back when its stacks are destroyed, also after they raced; and a
// quota removed (or a stack moved into another group) and then restored counts what the group holds
// now, not what it held when the counter last counted.
import type * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Harness } from "../support/harness";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../support/kube";

type Pkg = typeof import("../../provider/index");
type Quotas = { default?: number; stacks?: Record<string, number> };

describe("quota counts over a shared pool's history", () => {
  let ns = "";
  const harnesses: Harness[] = [];
  const stack = (project: string, stackName = "test") => {
    const h = Harness.create(project, { env: { KUBECONFIG: testKubeconfig() } });
    h.stackName = stackName;
    harnesses.push(h);
    return h;
  };
  const ledgerOf = (name: string) => ({
    kind: "kubernetes" as const,
    name,
    namespace: ns,
    context: "admin@test",
    lockDuration: "5s",
  });
  const ranges = [{ subnet: "10.73.0.0/27" }];

  /** The owner's program: the pool and its quotas (none when undefined), nothing allocated. */
  const owns = (h: Harness, pool: string, quotas: Quotas | undefined) => {
    const { IpPool } = h.pkg<Pkg>("pulumi-egress-ipam");
    return h.program(async () => {
      new IpPool("egress", { ranges, ledger: ledgerOf(pool), ...(quotas ? { quotas } : {}) });
    });
  };
  /** A tenant's program: a reference and `n` allocations. */
  const allocates = (h: Harness, pool: string, n: number) => {
    const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
    return h.program(async () => {
      const p = IpPool.shared("egress", { ledger: ledgerOf(pool) });
      return { ips: Array.from({ length: n }, (_, i) => new IpAllocation(`web-${i}`, { pool: p }).ip) };
    });
  };
  const objects = async (pool: string, role: string): Promise<k8s.V1ConfigMap[]> =>
    (
      await kube().core.listNamespacedConfigMap({
        namespace: ns,
        labelSelector: `egress-ipam/pool=${pool},egress-ipam/role=${role}`,
      })
    ).items;
  /** The live claims and holds of stacks whose name starts with `prefix`: [address, stack, state]. */
  const heldBy = async (pool: string, prefix: string) =>
    (await objects(pool, "claim"))
      .map((cm) => cm.data ?? {})
      .filter((d) => String(d.stack).startsWith(prefix))
      .filter((d) => d.state === "claim" || Date.parse(String(d.expires)) > Date.now())
      .map((d) => [d.address, d.stack, d.state]);
  /** The claim objects the pool's quota counters list, by name. */
  const counted = async (pool: string) =>
    (await objects(pool, "quota")).flatMap((cm) =>
      Object.keys(cm.data ?? {}).filter((k) => k.startsWith(`${pool}.`)),
    );
  const refusalOf = (p: Promise<unknown>) =>
    p.then(
      () => "",
      (e: unknown) => String(e),
    );

  beforeAll(async () => {
    ns = await freshNamespace("quota-history");
  });
  afterAll(async () => {
    for (const h of harnesses) h.dispose();
    await kube().core.deleteNamespace({ name: ns });
  });

  it("three stacks of a group race up and are destroyed: a fresh stack of the group gets the whole quota", async () => {
    const pool = uniqueName("qh-race");
    const owner = stack("qh-owner");
    await owns(owner, pool, { stacks: { "qh-team/*": 5 } });
    await owner.up();

    const racers = ["a", "b", "c"].map((s) => stack("qh-team", s));
    for (const h of racers) await allocates(h, pool, 3);
    const results = await Promise.allSettled(racers.map((h) => h.up({ parallel: 8 })));
    for (const r of results)
      if (r.status === "rejected") expect(String(r.reason)).toContain('quota "qh-team/*"');
    expect((await heldBy(pool, "organization/qh-team/")).length).toBeLessThanOrEqual(5);

    // Destroyed at once: their releases race for the group's counter too.
    await Promise.all(racers.map((h) => h.destroy()));
    expect(await heldBy(pool, "organization/qh-team/")).toEqual([]);
    expect(await counted(pool)).toEqual([]);

    const d = stack("qh-team", "d");
    await allocates(d, pool, 5);
    const up = await d.up();
    expect(up.outputs.ips?.value).toHaveLength(5);
    await allocates(d, pool, 6);
    expect(await refusalOf(d.preview())).toMatch(
      /QUOTA_EXCEEDED.*stack organization\/qh-team\/d is at quota "qh-team\/\*" .*: 5 addresses .* it holds 5 addresses and this would add 1 address/,
    );
  }, 600_000);

  it("a quota removed, more claimed, then the same quota restored: the group counts what it holds now", async () => {
    const pool = uniqueName("qh-restore");
    const owner = stack("qh-owner2");
    const tenant = stack("qh-tenant");
    await owns(owner, pool, { default: 2 });
    await owner.up();
    await allocates(tenant, pool, 2);
    await tenant.up();

    await owns(owner, pool, undefined);
    await owner.up();
    await allocates(tenant, pool, 7);
    await tenant.up();
    expect(await heldBy(pool, "organization/qh-tenant/")).toHaveLength(7);

    await owns(owner, pool, { default: 2 });
    await owner.up();
    await allocates(tenant, pool, 8);
    expect(await refusalOf(tenant.preview())).toMatch(
      /QUOTA_EXCEEDED.*stack organization\/qh-tenant\/test is at the default quota .*: 2 addresses, .* it holds 7 addresses and this would add 1 address/,
    );
    expect(await heldBy(pool, "organization/qh-tenant/")).toHaveLength(7);
  }, 600_000);

  it("a stack moved out of its group, more claimed, then moved back: the group counts what it holds now", async () => {
    const pool = uniqueName("qh-move");
    const owner = stack("qh-owner3");
    const tenant = stack("qh-grp", "t");
    const grouped = { stacks: { "qh-grp/*": 3 } };
    await owns(owner, pool, grouped);
    await owner.up();
    await allocates(tenant, pool, 2);
    await tenant.up();

    await owns(owner, pool, { stacks: { "qh-grp/*": 3, "qh-grp/t": 10 } });
    await owner.up();
    await allocates(tenant, pool, 5);
    await tenant.up();

    await owns(owner, pool, grouped);
    await owner.up();
    await allocates(tenant, pool, 6);
    expect(await refusalOf(tenant.preview())).toMatch(
      /QUOTA_EXCEEDED.*stack organization\/qh-grp\/t is at quota "qh-grp\/\*" .*: 3 addresses .* it holds 5 addresses and this would add 1 address/,
    );
  }, 600_000);
});
