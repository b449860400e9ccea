// A shared pool as a service, with the real engine and the real kube-apiserver: one stack owns the
// pool (defines, grows, shrinks it and sets quotas), tenant stacks reference it by its ledger with
// IpPool.shared and allocate from it without restating it; quotas are refused at preview, counted
// exactly under a race; ownership moves only by an explicit adopt.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli";
import { Harness } from "../support/harness";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../support/kube";

type Pkg = typeof import("../../provider/index");

describe("a shared pool as a service: an owner, tenants, quotas", () => {
  let ns = "";
  const pool = uniqueName("svc");
  const harnesses: Harness[] = [];
  const stack = (project: string, stackName?: string) => {
    const h = Harness.create(project, {
      env: { KUBECONFIG: testKubeconfig() },
      ...(stackName ? { stackName } : {}),
    });
    harnesses.push(h);
    return h;
  };
  const ledger = () => ({
    kind: "kubernetes" as const,
    name: pool,
    namespace: ns,
    context: "admin@test",
    lockDuration: "5s",
  });
  const quotas = { default: 3, stacks: { "svc-race/*": 4 } };
  const small = [{ subnet: "10.62.0.0/28" }];
  const grown = [{ subnet: "10.62.0.0/28" }, { subnet: "10.62.1.0/28" }];

  /** The owner's program: the pool, its ranges and quotas, nothing allocated. */
  const ownerProgram = (h: Harness, ranges: { subnet: string }[], extra: object = {}) => {
    const { IpPool } = h.pkg<Pkg>("pulumi-egress-ipam");
    return async () => {
      const p = new IpPool("egress", { ranges, ledger: ledger(), quotas, ...extra });
      return { ownedBy: p.ownedBy };
    };
  };
  /** A tenant's program: a reference and `n` allocations, its figures exported. */
  const tenantProgram = (h: Harness, n: number) => {
    const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
    return async () => {
      const p = IpPool.shared("egress", { ledger: ledger() });
      const ips = Array.from({ length: n }, (_, i) => new IpAllocation(`web-${i}`, { pool: p }).ip);
      return { ips, free: p.free, used: p.used, quota: p.quota, size: p.size, ownedBy: p.ownedBy };
    };
  };
  const claimsOf = async (stackPrefix: string) =>
    (
      await kube().core.listNamespacedConfigMap({
        namespace: ns,
        labelSelector: `egress-ipam/pool=${pool},egress-ipam/role=claim`,
      })
    ).items.filter((cm) => String(cm.data?.stack).startsWith(stackPrefix) && cm.data?.state === "claim");

  const owner = stack("svc-owner");
  const a = stack("svc-tenant-a");
  const b = stack("svc-tenant-b");

  beforeAll(async () => {
    ns = await freshNamespace("svc");
  });
  afterAll(async () => {
    for (const h of harnesses) h.dispose();
    await kube().core.deleteNamespace({ name: ns });
  });

  it("a tenant's reference shows the pool's size, free count and its quota at preview, and up gets the previewed addresses", async () => {
    await owner.program(ownerProgram(owner, small));
    const own = await owner.up();
    expect(String(own.outputs.ownedBy?.value)).toMatch(
      /^stack organization\/svc-owner\/test \(urn:pulumi:test::svc-owner::.*IpPool::egress\)$/,
    );

    await a.program(tenantProgram(a, 2));
    const preview = await a.preview();
    const ref = preview.planned("egress");
    // 10.62.0.0/28 hands out .2–.14 (.1 is the gateway): 13 addresses, all free before this stack.
    expect([ref?.size, ref?.free, ref?.used, ref?.quota]).toEqual(["13", "13", "0", "3"]);
    expect(ref?.ownedBy).toBe(own.outputs.ownedBy?.value);
    const planned = [0, 1].map((i) => preview.planned(`web-${i}`)?.ip);
    expect(planned).toEqual(["10.62.0.2", "10.62.0.3"]);
    const up = await a.up();
    expect(up.outputs.ips?.value).toEqual(planned);
    // The figures are as of the reference's check: up's saw what the preview planned for this stack.
    expect([up.outputs.free?.value, up.outputs.used?.value, up.outputs.quota?.value]).toEqual([
      "11",
      "2",
      "3",
    ]);
    // Another stack's allocation, or this one's, is no change of the reference: nothing to update.
    expect((await a.preview()).changeSummary).toEqual({ same: 4 });
  });

  it("the owner grows the pool and both tenants preview and up with no change to their programs", async () => {
    await owner.program(ownerProgram(owner, grown));
    await owner.up();
    const again = await a.preview();
    expect(again.op("web-0")).toBe("same");
    expect(again.op("web-1")).toBe("same");
    expect(again.planned("egress")?.size).toBe("26");
    await a.up();

    await b.program(tenantProgram(b, 2));
    const pb = await b.preview();
    expect([pb.planned("egress")?.free, pb.planned("egress")?.used]).toEqual(["24", "0"]);
    const ub = await b.up();
    expect(ub.outputs.ips?.value).toEqual([0, 1].map((i) => pb.planned(`web-${i}`)?.ip));
    expect(await claimsOf("organization/svc-tenant-")).toHaveLength(4);
    // Refresh reads a reference's figures again: b's two addresses are gone from a's free count.
    await a.refresh();
    const refreshed = (await a.resources()).find((r) => r.type.endsWith("IpPool"));
    expect([refreshed?.outputs?.free, refreshed?.outputs?.used]).toEqual(["22", "2"]);
  });

  it("a tenant over its quota is refused at preview, naming the quota, its count and who set it", async () => {
    await a.program(tenantProgram(a, 4));
    const err = String(await a.preview().catch((e: Error) => e));
    expect(err).toContain("QUOTA_EXCEEDED");
    expect(err).toContain("the default quota");
    expect(err).toContain("3 addresses");
    expect(err).toContain("set by stack organization/svc-owner/test");
    expect(await claimsOf("organization/svc-tenant-a/")).toHaveLength(2);
  });

  it("report shows a tenant's stack from its reference, and the ledger's usage per stack against quota", async () => {
    const stackReport = await runCli(["report", "--stack", a.fqStackName], a.env);
    expect(stackReport.stderr).toBe("");
    expect(stackReport.code).toBe(0);
    expect(stackReport.stdout).toContain("10.62.0.2");
    expect(stackReport.stdout).toContain("10.62.1.0/28");
    const ledgerReport = await runCli(
      ["report", "--ledger", `kubernetes:${ns}/${pool}`, "--context", "admin@test"],
      {
        KUBECONFIG: testKubeconfig(),
      },
    );
    expect(ledgerReport.code).toBe(0);
    expect(ledgerReport.stdout).toMatch(/organization\/svc-owner\/test \(owner\)/);
    // Its refused preview planned web-2 (within the quota) before refusing web-3: a hold, until it lapses.
    expect(ledgerReport.stdout).toMatch(/organization\/svc-tenant-a\/test +default 3 +2 +1 +0/);
  });

  it("the owner's shrink under a tenant's address is refused at preview, naming the tenant's stack and URN", async () => {
    await owner.program(ownerProgram(owner, [{ subnet: "10.62.1.0/28" }]));
    const err = String(await owner.preview().catch((e: Error) => e));
    expect(err).toContain("POOL_IN_USE");
    expect(err).toMatch(
      /10\.62\.0\.2 \(held by urn:pulumi:test::svc-tenant-a::[^ ]*IpAllocation::web-0 of stack organization\/svc-tenant-a\/test\)/,
    );
    await owner.program(ownerProgram(owner, grown));
  });

  it("two stacks racing at their shared quota never exceed it together", async () => {
    const r1 = stack("svc-race", "one");
    const r2 = stack("svc-race", "two");
    await r1.program(tenantProgram(r1, 3));
    await r2.program(tenantProgram(r2, 3));
    const results = await Promise.allSettled([r1.up({ parallel: 8 }), r2.up({ parallel: 8 })]);
    const held = await claimsOf("organization/svc-race/");
    expect(held.length).toBeLessThanOrEqual(4);
    const refused = results.filter((r) => r.status === "rejected").map((r) => String(r.reason));
    expect(refused.length).toBeGreaterThan(0);
    for (const e of refused) expect(e).toContain('quota "svc-race/*"');
  });

  it("another stack restating a different definition, or setting quotas, is refused; adopt takes ownership explicitly", async () => {
    const heir = stack("svc-heir");
    const { IpPool } = heir.pkg<Pkg>("pulumi-egress-ipam");
    await heir.program(async () => void new IpPool("egress", { ranges: small, ledger: ledger() }));
    const differs = String(await heir.preview().catch((e: Error) => e));
    expect(differs).toContain("IpPool.shared");
    expect(differs).toContain("written by stack organization/svc-owner/test");
    await heir.program(ownerProgram(heir, grown));
    expect(String(await heir.preview().catch((e: Error) => e))).toContain("only its owner sets quotas");

    await heir.program(ownerProgram(heir, grown, { adopt: true }));
    const took = await heir.up();
    expect(String(took.outputs.ownedBy?.value)).toContain("stack organization/svc-heir/test");
    // The old owner is now a member: stating quotas is refused, and the tenants follow the new owner.
    expect(String(await owner.preview().catch((e: Error) => e))).toContain("only its owner sets quotas");
    expect((await a.program(tenantProgram(a, 2)), (await a.preview()).planned("egress")?.ownedBy)).toContain(
      "svc-heir",
    );
  });

  it("the old owner, now restating the pool, becomes a reference of the same name keeping its holders' addresses", async () => {
    const { IpPool, IpAllocation } = owner.pkg<Pkg>("pulumi-egress-ipam");
    await owner.program(async () => {
      const p = new IpPool("egress", { ranges: grown, ledger: ledger() });
      return { ip: new IpAllocation("ops", { pool: p }).ip };
    });
    const ip = String((await owner.up()).outputs.ip?.value);
    await owner.program(async () => {
      const p = IpPool.shared("egress", { ledger: ledger() });
      return { ip: new IpAllocation("ops", { pool: p }).ip };
    });
    const preview = await owner.preview();
    expect([preview.op("egress"), preview.op("ops")]).toEqual(["update", "same"]);
    const up = await owner.up();
    expect(up.outputs.ip?.value).toBe(ip);
    expect((await claimsOf("organization/svc-owner/")).map((cm) => cm.data?.address)).toEqual([ip]);
  });

  it("destroying the owner's stack leaves the pool to its tenants, who keep allocating", async () => {
    const heir = harnesses.find((x) => x.fqStackName === "organization/svc-heir/test")!;
    await heir.destroy();
    await a.program(tenantProgram(a, 3));
    const preview = await a.preview();
    expect(preview.planned("egress")?.ownedBy).toContain("svc-heir");
    expect(preview.op("web-2")).toBe("create");
    await a.up();
    expect(await claimsOf("organization/svc-tenant-a/")).toHaveLength(3);
  });
});
