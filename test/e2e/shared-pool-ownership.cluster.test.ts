// Who owns an address of a shared pool *now*, on the paths that could weaken or lose a claim, with
// the real engine and the real kube-apiserver: a previewed adopt rename (a preview adds holds, it
// never turns a claim into a hold), and a stack bound to exactly the Role docs/shared-pools.md gives.
import * as k8s from "@kubernetes/client-node";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { ledgerStacks } from "../support/ledger-stacks";
import { changesOf } from "../support/harness";
import { kube, uniqueName } from "../support/kube";

type Pkg = typeof import("../../provider/index");

describe("a shared pool's claims keep their owner", () => {
  const ledger = ledgerStacks("own");
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

  /** The Role docs/shared-pools.md gives, as written there (the docs are the contract). */
  const documentedRole = (): k8s.V1Role => {
    const doc = fs.readFileSync(path.join(__dirname, "..", "..", "docs", "shared-pools.md"), "utf8");
    const block = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)]
      .map((m) => m[1]!)
      .find((y) => /kind: Role\b/.test(y));
    if (!block) throw new Error("docs/shared-pools.md has no yaml block with kind: Role");
    return k8s.loadYaml<k8s.V1Role>(block);
  };

  it("an adopt rename that is only previewed leaves the old claim a claim; another stack is refused its address after any time", async () => {
    const pool = uniqueName("prev-adopt");
    const ranges = [{ subnet: "10.70.0.0/28" }];
    const a = stack("prev-adopt-a");
    const pa = a.pkg<Pkg>("pulumi-egress-ipam");
    await a.program(async () => {
      const p = new pa.IpPool("egress", { ranges, ledger: ledgerOf(pool) });
      return { ip: new pa.IpAllocation("web", { pool: p }).ip };
    });
    const ip = String((await a.up()).outputs.ip?.value);
    const [before] = await claimObjects(pool);
    expect(before?.data).toMatchObject({ address: ip, state: "claim" });

    // The documented rename: the new name with the address and adopt: true, the old one removed.
    await a.program(async () => {
      const p = new pa.IpPool("egress", { ranges, ledger: ledgerOf(pool) });
      return { ip: new pa.IpAllocation("web2", { pool: p, ip, adopt: true }).ip };
    });
    const preview = await a.preview();
    expect(preview.op("web2")).toBe("create");
    expect(preview.planned("web2")?.ip).toBe(ip);
    const [after] = await claimObjects(pool);
    expect(after?.data?.state).toBe("claim");
    expect(after?.data?.owner).toBe(before?.data?.owner);

    // Nobody merges the pull request; its holds lapse. Another stack asking for the address is refused.
    await lapseHolds(pool);
    const b = stack("prev-adopt-b");
    const pb = b.pkg<Pkg>("pulumi-egress-ipam");
    await b.program(async () => {
      const p = new pb.IpPool("egress", { ranges, ledger: ledgerOf(pool) });
      return { ip: new pb.IpAllocation("thief", { pool: p, ip }).ip };
    });
    await expect(b.preview()).rejects.toThrow(new RegExp(`${ip.replace(/\./g, "\\.")}.*web`));
    await expect(b.up()).rejects.toThrow(/IP_UNAVAILABLE|is held by|claimed/);
    expect((await claimObjects(pool)).map((cm) => [cm.data?.address, cm.data?.owner])).toEqual([
      [ip, before?.data?.owner],
    ]);

    // The rename applied: the new resource holds the address as a claim, the old one's delete leaves it.
    const up = await a.up();
    expect(up.outputs.ip?.value).toBe(ip);
    const [renamed] = await claimObjects(pool);
    expect(renamed?.data?.state).toBe("claim");
    expect(renamed?.data?.owner).toMatch(/::web2$/);
    await b.destroy();
    await a.destroy();
    expect(await claimObjects(pool)).toEqual([]);
  });

  it("a stack bound to exactly the documented Role allocates, grows, previews, refreshes and destroys", async () => {
    const role = documentedRole();
    expect(role.rules?.map((r) => r.resources)).toEqual([["configmaps"], ["leases"]]);
    const name = uniqueName("ledger-role");
    await kube().rbac.createNamespacedRole({
      namespace: ledger.namespace,
      body: { ...role, metadata: { name, namespace: ledger.namespace } },
    });
    await kube().rbac.createNamespacedRoleBinding({
      namespace: ledger.namespace,
      body: {
        metadata: { name, namespace: ledger.namespace },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "limited" }],
      },
    });
    const pool = uniqueName("rbac");
    const h = stack("rbac");
    const pkg = h.pkg<Pkg>("pulumi-egress-ipam");
    const program = (subnets: string[], n: number) => async () => {
      const ledger = { ...ledgerOf(pool), context: "limited@test" };
      const p = new pkg.IpPool("egress", { ranges: subnets.map((subnet) => ({ subnet })), ledger });
      const out: Record<string, unknown> = {};
      for (let i = 0; i < n; i++) out[`r${i}`] = new pkg.IpAllocation(`r${i}`, { pool: p }).ip;
      return out;
    };
    // A pool that is full after the first up: each later plan must see every claim to plan at all.
    await h.program(program(["10.71.0.0/29"], 5));
    const first = await h.up();
    const firstIps = Object.values(first.outputs).map((o) => String(o.value));
    expect(firstIps.sort()).toEqual(["10.71.0.2", "10.71.0.3", "10.71.0.4", "10.71.0.5", "10.71.0.6"]);
    expect(first.stdout).not.toMatch(/refused to watch/);
    await h.program(program(["10.71.0.0/29", "10.71.1.0/29"], 7));
    const preview = await h.preview();
    const planned = ["r5", "r6"].map((r) => String(preview.planned(r)?.ip));
    for (const ip of planned) expect(ip).toMatch(/^10\.71\.1\.[2-6]$/);
    expect(new Set(planned).size).toBe(2);
    const grown = await h.up();
    expect(["r5", "r6"].map((r) => grown.outputs[r]?.value)).toEqual(planned);
    expect(grown.stdout).not.toMatch(/refused to watch/);
    await h.refresh();
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
    await h.destroy();
    expect(await claimObjects(pool)).toEqual([]);
  });

  it("a stack-local pool with a gap put on a ledger with a new holder in the same up: every holder keeps its own address", async () => {
    const pool = uniqueName("onto");
    const h = stack("onto");
    const pkg = h.pkg<Pkg>("pulumi-egress-ipam");
    const program = (names: string[], shared: boolean) => async () => {
      const p = new pkg.IpPool("egress", {
        ranges: [{ subnet: "10.72.0.0/28" }],
        ...(shared ? { ledger: ledgerOf(pool) } : {}),
      });
      return Object.fromEntries(names.map((n) => [n, new pkg.IpAllocation(n, { pool: p }).ip]));
    };
    await h.program(program(["a", "b", "c"], false));
    await h.up();
    await h.program(program(["a", "c"], false)); // b goes: a gap between a and c
    const kept = (await h.up()).outputs;
    const held = [String(kept.a?.value), String(kept.c?.value)];
    await h.program(program(["a", "c", "d"], true));
    const preview = await h.preview();
    const planned = String(preview.planned("d")?.ip);
    expect(held).not.toContain(planned);
    const up = await h.up();
    expect([up.outputs.a?.value, up.outputs.c?.value]).toEqual(held);
    expect(up.outputs.d?.value).toBe(planned);
    const claims = await claimObjects(pool);
    expect(claims.map((cm) => cm.data?.address).sort()).toEqual([...held, planned].sort());
    expect(claims.every((cm) => cm.data?.state === "claim")).toBe(true);
    await h.destroy();
    expect(await claimObjects(pool)).toEqual([]);
  });
});
