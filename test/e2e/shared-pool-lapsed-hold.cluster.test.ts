// A tenant's hold that lapsed while the pool's owner changed the pool (issue #56), with the real
// engine and the real kube-apiserver: the owner's change passes (a lapsed hold holds nothing), and
// the tenant's `up` that follows must not renew the hold into a claim of an address or block the
// pool no longer has; it fails naming the entry and the change, and the next run plans inside the
// pool. Fifteen minutes without an `up` are simulated by setting the holds' expiry into the past.
import * as k8s from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { ledgerStacks } from "../support/ledger-stacks";
import { kube, uniqueName } from "../support/kube";

type Pkg = typeof import("../../provider/index");

describe("a lapsed hold is checked against the pool as it is now", () => {
  const ledger = ledgerStacks("lapse");
  const { stack, ledgerOf } = ledger;
  const claimObjects = async (pool: string): Promise<k8s.V1ConfigMap[]> =>
    (
      await kube().core.listNamespacedConfigMap({
        namespace: ledger.namespace,
        labelSelector: `egress-ipam/pool=${pool},egress-ipam/role=claim`,
      })
    ).items;
  /** Every hold of the pool made older than its lifetime: what 15 minutes without an `up` leave. */
  const lapseHolds = async (pool: string) => {
    for (const cm of await claimObjects(pool)) {
      if (cm.data?.state !== "hold") continue;
      cm.data.expires = new Date(Date.now() - 60_000).toISOString();
      await kube().core.replaceNamespacedConfigMap({
        name: cm.metadata!.name!,
        namespace: ledger.namespace,
        body: cm,
      });
    }
  };

  it("an address excluded by the owner after the tenant's preview: the tenant's up fails naming it, the next run plans another", async () => {
    const pool = uniqueName("lapse-ip");
    const owner = stack("lapse-owner");
    const po = owner.pkg<Pkg>("pulumi-egress-ipam");
    const ownerProgram = (exclude: string[]) => async () => {
      new po.IpPool("egress", {
        ranges: [{ subnet: "10.46.0.0/28" }],
        ...(exclude.length > 0 ? { exclude } : {}),
        ledger: ledgerOf(pool),
      });
      return {};
    };
    await owner.program(ownerProgram([]));
    await owner.up();

    const tenant = stack("lapse-tenant");
    const pt = tenant.pkg<Pkg>("pulumi-egress-ipam");
    await tenant.program(async () => {
      const p = pt.IpPool.shared("egress", { ledger: ledgerOf(pool) });
      const a = new pt.IpAllocation("t", { pool: p });
      return { ip: a.ip, gateway: a.gateway };
    });
    const x = String((await tenant.preview()).planned("t")?.ip);
    expect(x).toMatch(/^10\.46\.0\./);

    // Fifteen minutes pass; the owner excludes X (its check lists only live holders: it passes).
    await lapseHolds(pool);
    await owner.program(ownerProgram([x]));
    await owner.up();

    // The tenant's up must not claim X outside the pool: it fails naming X and the change.
    const err = await tenant.up().then(
      (r) =>
        `up claimed ip ${String(r.outputs.ip?.value)}, gateway ${JSON.stringify(r.outputs.gateway?.value)}`,
      (e: Error) => String(e),
    );
    expect(err).toContain("[POOL_CHANGED]");
    expect(err).toContain(`address ${x}`);
    expect(err).toMatch(/excluded/);
    expect((await claimObjects(pool)).filter((cm) => cm.data?.state === "claim")).toEqual([]);

    // Run again: preview shows another address, and up gets exactly that one, inside the pool.
    const y = String((await tenant.preview()).planned("t")?.ip);
    expect(y).not.toBe(x);
    const up = await tenant.up();
    expect(up.outputs.ip?.value).toBe(y);
    expect(up.outputs.gateway?.value).toBe("10.46.0.1");
    // The owner's later updates are not held up by the tenant.
    await owner.program(ownerProgram([x, "10.46.0.14"]));
    await owner.up();
    await tenant.destroy();
    await owner.destroy();
  });

  it("a block with an address the owner excluded after the tenant's preview: the tenant's up fails naming it", async () => {
    const pool = uniqueName("lapse-block");
    const owner = stack("lapse-block-owner");
    const po = owner.pkg<Pkg>("pulumi-egress-ipam");
    const ownerProgram = (exclude: string[], prefixLengths: { min: number; max: number }) => async () => {
      new po.IpPool("blocks", {
        ranges: [
          { subnet: "10.46.4.0/23", rangeStart: "10.46.5.0", rangeEnd: "10.46.5.255", gateway: "10.46.4.1" },
        ],
        strategy: "lowest-free",
        prefixLengths,
        ...(exclude.length > 0 ? { exclude } : {}),
        ledger: ledgerOf(pool),
      });
      return {};
    };
    await owner.program(ownerProgram([], { min: 24, max: 27 }));
    await owner.up();

    const tenant = stack("lapse-block-tenant");
    const pt = tenant.pkg<Pkg>("pulumi-egress-ipam");
    await tenant.program(async () => {
      const p = pt.IpPool.shared("blocks", { ledger: ledgerOf(pool) });
      return { cidr: new pt.PrefixAllocation("net", { pool: p, prefixLength: 26 }).cidr };
    });
    const block = String((await tenant.preview()).planned("net")?.cidr);
    expect(block).toBe("10.46.5.0/26");

    await lapseHolds(pool);
    await owner.program(ownerProgram(["10.46.5.9"], { min: 24, max: 27 }));
    await owner.up();

    const err = await tenant.up().then(
      (r) => `up claimed block ${String(r.outputs.cidr?.value)}`,
      (e: Error) => String(e),
    );
    expect(err).toContain("[POOL_CHANGED]");
    expect(err).toContain(`block ${block}`);
    expect((await claimObjects(pool)).filter((cm) => cm.data?.state === "claim")).toEqual([]);
    expect((await tenant.up()).outputs.cidr?.value).toBe("10.46.5.64/26");

    // A tightened prefix rule: a /26 is no longer allowed, and the tenant's next plan says so.
    await tenant.destroy();
    await tenant.preview();
    await lapseHolds(pool);
    await owner.program(ownerProgram(["10.46.5.9"], { min: 27, max: 28 }));
    await owner.up();
    const refused = String(await tenant.up().catch((e: Error) => e));
    expect(refused).toContain("[PREFIX_NOT_ALLOWED]");
    expect((await claimObjects(pool)).filter((cm) => cm.data?.state === "claim")).toEqual([]);
    await owner.destroy();
  });
});
