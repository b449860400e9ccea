// The format of a shared pool's definition across versions, with the real engine and the real
// kube-apiserver (issue #56, item 7): a definition of a newer format is refused by this version and
// left as it is; the rewrite an older version makes (without format, markers or quotas) is refused
// until the pool's owner writes it again with this version; and a definition from before formats
// is read and upgraded.
import type * as k8s from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { ledgerStacks } from "../support/ledger-stacks";
import { changesOf, Harness } from "../support/harness";
import { kube, uniqueName } from "../support/kube";

type Pkg = typeof import("../../provider/index");
type Quotas = { default?: number };

describe("the format of a shared pool's definition", () => {
  const ledger = ledgerStacks("pool-format");
  const { stack, ledgerOf } = ledger;

  /** The owner's program: a pool with a rule for blocks (so entries keep markers) and quotas. */
  const owns = (h: Harness, pool: string, subnet: string, quotas: Quotas) => {
    const { IpPool } = h.pkg<Pkg>("pulumi-egress-ipam");
    return h.program(async () => {
      new IpPool("egress", {
        ranges: [{ subnet }],
        prefixLengths: { min: 26, max: 28 },
        ledger: ledgerOf(pool),
        quotas,
      });
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
  const definitionOf = (pool: string) =>
    kube().core.readNamespacedConfigMap({ name: `${pool}.pool`, namespace: ledger.namespace });
  /** Replaces the definition's data with `data`, as a writer that read it does (carrying its resourceVersion). */
  const rewrite = async (pool: string, data: (d: Record<string, string>) => Record<string, string>) => {
    const cm = await definitionOf(pool);
    await kube().core.replaceNamespacedConfigMap({
      name: `${pool}.pool`,
      namespace: ledger.namespace,
      body: { ...cm, data: data(cm.data ?? {}) },
    });
  };
  const objects = async (pool: string, role: string): Promise<k8s.V1ConfigMap[]> =>
    (
      await kube().core.listNamespacedConfigMap({
        namespace: ledger.namespace,
        labelSelector: `egress-ipam/pool=${pool},egress-ipam/role=${role}`,
      })
    ).items;
  /** Every object of the pool but its definition: name → resourceVersion. */
  const snapshot = async (pool: string) =>
    Object.fromEntries(
      (
        await kube().core.listNamespacedConfigMap({
          namespace: ledger.namespace,
          labelSelector: `egress-ipam/pool=${pool}`,
        })
      ).items.map((cm) => [cm.metadata!.name!, cm.metadata!.resourceVersion!]),
    );
  const refusalOf = (p: Promise<unknown>) =>
    p.then(
      () => "",
      (e: unknown) => String(e),
    );

  it("a definition of a newer format is refused by every stack of this version, and nothing is changed", async () => {
    const pool = uniqueName("fmt-newer");
    const owner = stack("fmt-owner-a");
    const tenant = stack("fmt-tenant-a");
    await owns(owner, pool, "10.75.2.0/24", { default: 3 });
    await owner.up();
    await allocates(tenant, pool, 1);
    await tenant.up();

    // What a later version writes: a format this one does not know, and a setting it cannot read.
    await rewrite(pool, (d) => ({ ...d, format: "2", laterSetting: "on" }));
    const before = await snapshot(pool);
    const newer = new RegExp(
      `VERSION_MISMATCH.*pool "${pool}".*format 2.*organization/fmt-owner-a/test.*format 1.*upgrade pulumi-egress-ipam`,
    );

    await allocates(tenant, pool, 2);
    expect(await refusalOf(tenant.preview())).toMatch(newer);
    expect(await refusalOf(tenant.up())).toMatch(newer);
    await owns(owner, pool, "10.75.2.0/24", { default: 4 });
    expect(await refusalOf(owner.preview())).toMatch(newer);
    expect(await refusalOf(owner.up())).toMatch(newer);
    expect(await refusalOf(tenant.destroy())).toMatch(newer);

    expect(await snapshot(pool)).toEqual(before);
    expect((await definitionOf(pool)).data).toMatchObject({ format: "2", laterSetting: "on" });
  }, 600_000);

  it("a rewrite by an older version, without markers and quotas, is refused until the owner writes it again", async () => {
    const pool = uniqueName("fmt-older");
    const owner = stack("fmt-owner-b");
    const tenant = stack("fmt-tenant-b");
    await owns(owner, pool, "10.75.1.0/24", { default: 2 });
    await owner.up();
    await allocates(tenant, pool, 2);
    await tenant.up();
    expect((await objects(pool, "marker")).length).toBeGreaterThan(0);
    expect((await objects(pool, "quota")).length).toBeGreaterThan(0);

    // The owner's stack run with a version from before markers and quotas (2845e09 .. a327e55): its
    // update writes the definition as it knows it, which drops the markers, the quotas and the format.
    await rewrite(pool, (d) => ({
      definition: d.definition!,
      stack: d.stack!,
      owner: d.owner!,
      written: new Date().toISOString(),
    }));

    await allocates(tenant, pool, 3);
    expect(await refusalOf(tenant.preview())).toMatch(
      new RegExp(
        `VERSION_MISMATCH.*pool "${pool}".*organization/fmt-owner-b/test.*markers.*quotas.*upgrade pulumi-egress-ipam in stack organization/fmt-owner-b/test.*pulumi up`,
      ),
    );

    // The owner's stack on this version writes it again: its quotas, its markers, the format.
    await owns(owner, pool, "10.75.1.0/24", { default: 2 });
    expect(changesOf((await owner.preview()).changeSummary)).toEqual({ update: 1 });
    await owner.up();
    expect((await definitionOf(pool)).data).toMatchObject({
      format: "1",
      quotas: JSON.stringify({ default: 2 }),
      markers: "26-28",
      markersReady: "26-28",
    });
    expect(changesOf((await owner.preview()).changeSummary)).toEqual({});

    // The quota holds again: the tenant has 2.
    expect(await refusalOf(tenant.preview())).toMatch(
      /QUOTA_EXCEEDED.*is at the default quota .*: 2 addresses, .* it holds 2 addresses and this would add 1 address/,
    );
  }, 600_000);

  it("a definition from before formats is read by this version, and its owner's next up writes the format", async () => {
    const pool = uniqueName("fmt-before");
    const owner = stack("fmt-owner-c");
    const tenant = stack("fmt-tenant-c");
    await owns(owner, pool, "10.75.3.0/24", { default: 2 });
    await owner.up();
    await allocates(tenant, pool, 1);
    await tenant.up();

    // As the version before this one wrote it: everything but the format.
    await rewrite(pool, ({ format: _format, ...d }) => d);
    const earlier = (await definitionOf(pool)).data!;
    expect(earlier.format).toBeUndefined();

    await allocates(tenant, pool, 2);
    expect((await tenant.up()).outputs.ips?.value).toHaveLength(2);

    expect(changesOf((await owner.preview()).changeSummary)).toEqual({ update: 1 });
    await owner.up();
    const { written: _w, ...kept } = earlier;
    expect((await definitionOf(pool)).data).toMatchObject({ ...kept, format: "1" });
    expect(changesOf((await owner.preview()).changeSummary)).toEqual({});

    await allocates(tenant, pool, 3);
    expect(await refusalOf(tenant.preview())).toMatch(
      /QUOTA_EXCEEDED.*is at the default quota .*: 2 addresses, .* it holds 2 addresses and this would add 1 address/,
    );
  }, 600_000);
});
