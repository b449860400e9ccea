// Who holds an address of a shared pool, off the happy path, with the real engine and the real
// kube-apiserver: same-named stacks on two backends, a pool renamed with an alias, a preview that
// is never applied, a foreign ConfigMap carrying the pool's label, and webmesh node addresses
// (referenced by stack identity and resource instance, never by names).
import * as k8s from "@kubernetes/client-node";
import type { LocalWorkspace } from "@pulumi/pulumi/automation";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { ledgerStacks } from "../support/ledger-stacks";
import { changesOf, Harness } from "../support/harness";
import { kube, testKubeconfig, uniqueName } from "../support/kube";

type Pkg = typeof import("../../provider/index");

describe("who holds an address of a shared pool", () => {
  const ledger = ledgerStacks("ident");
  const { stack, ledgerOf } = ledger;
  const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  const ipsOf = (outputs: Record<string, { value: unknown }>) =>
    Object.values(outputs).map((o) => String(o.value));
  const claimObjects = async (pool: string) =>
    (
      await kube().core.listNamespacedConfigMap({
        namespace: ledger.namespace,
        labelSelector: `egress-ipam/pool=${pool},egress-ipam/role=claim`,
      })
    ).items;
  const claimsOf = async (pool: string) =>
    (
      await kube().core.listNamespacedConfigMap({
        namespace: ledger.namespace,
        labelSelector: `egress-ipam/pool=${pool},egress-ipam/role=claim`,
      })
    ).items
      .map((cm) => String(cm.data?.address))
      .sort();

  it("two network/prod stacks on two file backends get disjoint addresses, and a destroy frees only its own", async () => {
    const pool = uniqueName("twins");
    const program = (h: Harness) => {
      const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
      return async () => {
        const p = new IpPool("egress", { ranges: [{ subnet: "10.60.0.0/27" }], ledger: ledgerOf(pool) });
        return Object.fromEntries(names("a", 5).map((n) => [n, new IpAllocation(n, { pool: p }).ip]));
      };
    };
    const first = stack("network");
    const second = stack("network");
    expect(first.fqStackName).toBe(second.fqStackName);
    await first.program(program(first));
    await second.program(program(second));
    const one = ipsOf((await first.up()).outputs);
    const two = ipsOf((await second.up()).outputs);
    expect(new Set([...one, ...two]).size).toBe(10);
    expect(await claimsOf(pool)).toEqual([...one, ...two].sort());
    await first.destroy();
    expect(await claimsOf(pool)).toEqual([...two].sort());
    await second.destroy();
    expect(await claimsOf(pool)).toEqual([]);
  });

  it("a pool renamed with an alias keeps every address and its claims; another stack gets none of them", async () => {
    const pool = uniqueName("alias");
    const a = stack("alias-a");
    const { IpPool, IpAllocation } = a.pkg<Pkg>("pulumi-egress-ipam");
    const ledger = ledgerOf(pool);
    const programA = (poolName: string) => async () => {
      const aliases = poolName === "egress" ? [] : [{ name: "egress" }];
      const p = new IpPool(poolName, { ranges: [{ subnet: "10.61.0.0/28" }], ledger }, { aliases });
      return Object.fromEntries(names("a", 5).map((n) => [n, new IpAllocation(n, { pool: p }).ip]));
    };
    await a.program(programA("egress"));
    const before = ipsOf((await a.up()).outputs).sort();
    await a.program(programA("egress-renamed"));
    const preview = await a.preview();
    for (const n of names("a", 5)) expect(preview.op(n)).toBe("same");
    const after = await a.up();
    expect(ipsOf(after.outputs).sort()).toEqual(before);
    expect(await claimsOf(pool)).toEqual(before);

    // The pool has 13 addresses: 8 are free, and another stack asking for all 8 gets none of a's.
    const b = stack("alias-b");
    const pkgB = b.pkg<Pkg>("pulumi-egress-ipam");
    await b.program(async () => {
      const p = new pkgB.IpPool("egress", { ranges: [{ subnet: "10.61.0.0/28" }], ledger });
      return Object.fromEntries(names("b", 8).map((n) => [n, new pkgB.IpAllocation(n, { pool: p }).ip]));
    });
    const theirs = ipsOf((await b.up()).outputs);
    expect(theirs.filter((ip) => before.includes(ip))).toEqual([]);
    await b.destroy();
    await a.destroy();
    expect(await claimsOf(pool)).toEqual([]);
  });

  it("a name freed by a rename is a new holder: it gets another address and a claim of its own", async () => {
    const pool = uniqueName("freed");
    const h = stack("freed");
    const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
    const program = (allocations: [string, string[]][]) => async () => {
      const p = new IpPool("egress", { ranges: [{ subnet: "10.62.0.0/28" }], ledger: ledgerOf(pool) });
      const out: Record<string, unknown> = {};
      for (const [name, aliases] of allocations)
        out[name] = new IpAllocation(name, { pool: p }, { aliases: aliases.map((a) => ({ name: a })) }).ip;
      return out;
    };
    await h.program(program([["web", []]]));
    const first = String((await h.up()).outputs.web?.value);
    await h.program(program([["web2", ["web"]]]));
    expect((await h.up()).outputs.web2?.value).toBe(first);
    await h.program(
      program([
        ["web2", []],
        ["web", []],
      ]),
    );
    const planned = (await h.preview()).planned("web")?.ip;
    expect(planned).not.toBe(first);
    const up = await h.up();
    expect(up.outputs.web2?.value).toBe(first);
    expect(up.outputs.web?.value).toBe(planned);
    expect(await claimsOf(pool)).toEqual([first, String(planned)].sort());
    await h.destroy();
    expect(await claimsOf(pool)).toEqual([]);
  });

  it("a preview of a grown pool that is never applied leaves the stored definition as it was", async () => {
    const pool = uniqueName("grow");
    const h = stack("grow");
    const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
    const program = (subnets: string[]) => async () => {
      const p = new IpPool("egress", {
        ranges: subnets.map((subnet) => ({ subnet })),
        ledger: ledgerOf(pool),
      });
      return { ip: new IpAllocation("g-0", { pool: p }).ip };
    };
    await h.program(program(["10.62.0.0/28"]));
    await h.up();
    const stored = async () =>
      (await kube().core.readNamespacedConfigMap({ name: `${pool}.pool`, namespace: ledger.namespace })).data
        ?.definition;
    const deployed = await stored();
    await h.program(program(["10.62.0.0/28", "10.62.1.0/28"]));
    const preview = await h.preview();
    expect(preview.op("egress")).toBe("update");
    expect(await stored()).toBe(deployed);
    // The deployed program is still accepted: nothing was changed for anyone.
    await h.program(program(["10.62.0.0/28"]));
    expect((await h.preview()).op("egress")).toBe("same");
    await h.program(program(["10.62.0.0/28", "10.62.1.0/28"]));
    await h.up();
    expect(await stored()).toContain("10.62.1.0/28");
    await h.destroy();
  });

  it("a ConfigMap with the pool's label that is no claim is skipped, never fatal", async () => {
    const pool = uniqueName("foreign");
    await kube().core.createNamespacedConfigMap({
      namespace: ledger.namespace,
      body: {
        metadata: {
          name: `${pool}.handmade`,
          labels: { "egress-ipam/pool": pool, "egress-ipam/role": "claim" },
        },
        data: { address: "10.63.0.300", state: "claim", stack: "x/y/z", owner: "urn:x", seq: "1" },
      },
    });
    await kube().core.createNamespacedConfigMap({
      namespace: ledger.namespace,
      body: {
        metadata: {
          name: `${pool}.10.63.0.2`,
          labels: { "egress-ipam/pool": pool, "egress-ipam/role": "claim" },
        },
        data: { address: "10.63.0.9", state: "claim", stack: "x/y/z", owner: "urn:x", seq: "1" },
      },
    });
    const h = stack("foreign");
    const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
    await h.program(async () => {
      const p = new IpPool("egress", { ranges: [{ subnet: "10.63.0.0/28" }], ledger: ledgerOf(pool) });
      return Object.fromEntries(names("f", 3).map((n) => [n, new IpAllocation(n, { pool: p }).ip]));
    });
    const up = await h.up();
    const ips = ipsOf(up.outputs);
    expect(new Set(ips).size).toBe(3);
    // The misnamed object sits on the name of 10.63.0.2, so that address cannot be claimed; both
    // objects are named in a warning.
    expect(ips).not.toContain("10.63.0.2");
    expect(up.stdout).toContain(`${pool}.handmade`);
    expect(up.stdout).toContain(`${pool}.10.63.0.2`);
    await h.destroy();
  });

  it("an allocation moved to another pool object on the same ledger keeps its address and its claim", async () => {
    const pool = uniqueName("move");
    const h = stack("move");
    const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
    const program = (from: "one" | "two") => async () => {
      const ranges = [{ subnet: "10.64.0.0/28" }];
      const one = new IpPool("one", { ranges, ledger: ledgerOf(pool) });
      const two = new IpPool("two", { ranges, ledger: ledgerOf(pool) });
      return { ip: new IpAllocation("m-0", { pool: from === "one" ? one : two }).ip };
    };
    await h.program(program("one"));
    const ip = String((await h.up()).outputs.ip?.value);
    await h.program(program("two"));
    // A replacement (another pool object), created before the old copy is deleted.
    const up = await h.up();
    expect(up.outputs.ip?.value).toBe(ip);
    expect(await claimsOf(pool)).toEqual([ip]);
    await h.destroy();
    expect(await claimsOf(pool)).toEqual([]);
  });

  it("a stack written by an earlier version (no identities in state or claims) migrates on its next up", async () => {
    const pool = uniqueName("legacy");
    const h = stack("legacy");
    const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
    const program = (n: number) => async () => {
      const p = new IpPool("egress", { ranges: [{ subnet: "10.65.0.0/28" }], ledger: ledgerOf(pool) });
      return Object.fromEntries(names("l", n).map((x) => [x, new IpAllocation(x, { pool: p }).ip]));
    };
    await h.program(program(3));
    const before = ipsOf((await h.up()).outputs).sort();
    // What the earlier version wrote: no stackId or instance in the checkpoint or the claims.
    const file = h.checkpointFile;
    const checkpoint = JSON.parse(fs.readFileSync(file, "utf8"));
    for (const r of checkpoint.checkpoint.latest.resources as { inputs?: object; outputs?: object }[]) {
      for (const props of [r.inputs, r.outputs] as Record<string, unknown>[]) {
        if (!props) continue;
        delete props.stackId;
        delete props.instance;
      }
    }
    fs.writeFileSync(file, JSON.stringify(checkpoint));
    for (const cm of await claimObjects(pool)) {
      expect(cm.data?.stackId).toMatch(/^stack-[0-9a-f]{24}$/);
      delete cm.data!.stackId;
      delete cm.data!.instance;
      await kube().core.replaceNamespacedConfigMap({
        name: cm.metadata!.name!,
        namespace: ledger.namespace,
        body: cm,
      });
    }
    // One more holder: planned around the earlier ones, which keep their addresses.
    await h.program(program(4));
    const preview = await h.preview();
    for (const n of names("l", 3)) expect(preview.op(n)).toBe("update");
    const up = await h.up();
    const ips = ipsOf(up.outputs);
    expect(ips.slice(0, 3).sort()).toEqual(before);
    expect(before).not.toContain(ips[3]);
    const claims = await claimObjects(pool);
    expect(claims).toHaveLength(4);
    expect(new Set(claims.map((cm) => cm.data?.stackId)).size).toBe(1);
    expect(claims.every((cm) => /^[0-9a-f-]{36}$/.test(String(cm.data?.instance)))).toBe(true);
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
    await h.destroy();
    expect(await claimsOf(pool)).toEqual([]);
  });

  it("a renamed stack, with its pool's lock settings changed, updates and destroys cleanly", async () => {
    const pool = uniqueName("rename");
    const h = stack("rename");
    const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
    const program = (lockDuration: string) => async () => {
      const ledger = { ...ledgerOf(pool), lockDuration, lockAcquireTimeout: "20s" };
      const p = new IpPool("egress", { ranges: [{ subnet: "10.66.0.0/28" }], ledger });
      return Object.fromEntries(names("r", 2).map((x) => [x, new IpAllocation(x, { pool: p }).ip]));
    };
    await h.program(program("5s"));
    const before = ipsOf((await h.up()).outputs).sort();
    await h.rename("renamed");
    await h.program(program("7s"));
    const preview = await h.preview();
    expect(preview.op("egress")).toBe("update");
    const up = await h.up();
    expect(ipsOf(up.outputs).sort()).toEqual(before);
    expect(await claimsOf(pool)).toEqual(before);
    // Renamed again and destroyed without an up in between: the state has the old name.
    await h.rename("renamed-again");
    await h.destroy();
    expect(await claimsOf(pool)).toEqual([]);
  });

  it("a renamed stack with a stack-local pool destroys without an up in between", async () => {
    const h = stack("rename-local");
    const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
    await h.program(async () => {
      const p = new IpPool("egress", { ranges: [{ subnet: "10.67.0.0/28" }] });
      return { ip: new IpAllocation("r-0", { pool: p }).ip };
    });
    await h.up();
    await h.rename("renamed");
    await h.destroy();
    expect(await h.resources()).toEqual([]);
  });

  it("deleted claims are found by refresh and made again by up; a claim another stack took is refused at preview", async () => {
    const pool = uniqueName("lost");
    const h = stack("lost");
    const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
    await h.program(async () => {
      const p = new IpPool("egress", { ranges: [{ subnet: "10.68.0.0/28" }], ledger: ledgerOf(pool) });
      return Object.fromEntries(names("k", 3).map((x) => [x, new IpAllocation(x, { pool: p }).ip]));
    });
    const ips = ipsOf((await h.up()).outputs);
    // An etcd restore, a recreated namespace or a manual cleanup: two claims are gone.
    const gone = ips.slice(0, 2);
    for (const cm of await claimObjects(pool)) {
      if (gone.includes(String(cm.data?.address)))
        await kube().core.deleteNamespacedConfigMap({
          name: cm.metadata!.name!,
          namespace: ledger.namespace,
        });
    }
    const refresh = await h.refresh();
    expect(refresh.summary.resourceChanges?.update).toBe(2);
    const lost = (await h.resources()).filter((r) => r.outputs?.claim !== undefined);
    expect(lost.map((r) => String(r.outputs?.ip)).sort()).toEqual([...gone].sort());
    expect(String(lost[0]?.outputs?.claim)).toContain("no claim");
    const preview = await h.preview();
    expect([preview.op("k-0"), preview.op("k-1"), preview.op("k-2")]).toEqual(["update", "update", "same"]);
    const up = await h.up();
    expect(ipsOf(up.outputs)).toEqual(ips);
    expect(await claimsOf(pool)).toEqual([...ips].sort());
    expect((await h.resources()).filter((r) => r.outputs?.claim !== undefined)).toEqual([]);

    // Another stack claims one of them while this stack's claim is gone: preview names it.
    const [victim] = (await claimObjects(pool)).filter((cm) => cm.data?.address === ips[2]);
    await kube().core.deleteNamespacedConfigMap({
      name: victim!.metadata!.name!,
      namespace: ledger.namespace,
    });
    const { instance: _instance, ...kept } = victim!.data!;
    const other = { ...kept, stack: "organization/thief/prod", stackId: "stack-thief", owner: "urn:thief" };
    await kube().core.createNamespacedConfigMap({
      namespace: ledger.namespace,
      body: { metadata: { name: victim!.metadata!.name!, labels: victim!.metadata!.labels }, data: other },
    });
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toContain(`${ips[2]}`);
    expect(err).toContain("urn:thief of stack organization/thief/prod");
    await kube().core.deleteNamespacedConfigMap({
      name: victim!.metadata!.name!,
      namespace: ledger.namespace,
    });
    await h.destroy();
  });

  it("a stack-local pool put onto a ledger keeps its holders' addresses and claims them, without a replacement", async () => {
    const pool = uniqueName("onto");
    const h = stack("onto");
    const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
    const program = (shared: boolean) => async () => {
      const ledger = shared ? ledgerOf(pool) : undefined;
      const p = new IpPool("egress", { ranges: [{ subnet: "10.69.0.0/28" }], ledger });
      return Object.fromEntries(names("o", 3).map((x) => [x, new IpAllocation(x, { pool: p }).ip]));
    };
    await h.program(program(false));
    const ips = ipsOf((await h.up()).outputs);
    await h.program(program(true));
    const preview = await h.preview();
    expect(preview.op("egress")).toBe("update");
    for (const n of names("o", 3)) expect(preview.op(n)).toBe("update");
    const up = await h.up();
    expect(ipsOf(up.outputs)).toEqual(ips);
    expect(await claimsOf(pool)).toEqual([...ips].sort());
    await h.destroy();
    expect(await claimsOf(pool)).toEqual([]);
  });

  it("a switched kubeconfig context pointing at another cluster is refused at preview and at destroy", async () => {
    const pool = uniqueName("pin");
    const h = stack("pin");
    const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
    // No context in the ledger: the current one decides, as with kubectl.
    const { context: _context, ...ledger } = ledgerOf(pool);
    const workspace = (
      await h.program(async () => {
        const p = new IpPool("egress", { ranges: [{ subnet: "10.70.0.0/28" }], ledger });
        return { ip: new IpAllocation("p-0", { pool: p }).ip };
      })
    ).workspace as LocalWorkspace;
    const ip = String((await h.up()).outputs.ip?.value);
    // `kubectl config use-context` to a context of another cluster (another CA).
    const config = new k8s.KubeConfig();
    config.loadFromFile(testKubeconfig());
    const test = config.getCluster("test")!;
    config.addCluster({
      ...test,
      name: "elsewhere",
      caData: Buffer.from("another cluster's CA").toString("base64"),
    });
    config.addContext({ name: "admin@elsewhere", cluster: "elsewhere", user: "admin" });
    config.setCurrentContext("admin@elsewhere");
    const switched = path.join(path.dirname(h.checkpointFile), "switched-kubeconfig");
    fs.writeFileSync(switched, config.exportConfig());
    workspace.envVars.KUBECONFIG = switched;
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toContain('context "admin@elsewhere"');
    expect(err).toMatch(/on the cluster with ca sha256:[0-9a-f]{16}/);
    const destroy = String(await h.destroy().catch((e: Error) => e));
    expect(destroy).toContain("another cluster");
    expect(await claimsOf(pool)).toEqual([ip]);
    workspace.envVars.KUBECONFIG = testKubeconfig();
    await h.destroy();
    expect(await claimsOf(pool)).toEqual([]);
  });

  it("webmesh: two network/prod stacks on two file backends share a node's address until the last one destroys", async () => {
    const pool = uniqueName("twins");
    const program = (h: Harness) => async () => {
      const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
      const mesh = new IpPool("mesh", { network: "10.43.0.0/29", ledger: ledgerOf(pool) });
      return { prefix: new IpAllocation("node-1", { pool: mesh, nodeId: "node-1" }).prefix };
    };
    const first = stack("network");
    const second = stack("network");
    expect(first.fqStackName).toBe(second.fqStackName);
    await first.program(program(first));
    await second.program(program(second));
    const one = (await first.up()).outputs.prefix?.value;
    const two = (await second.up()).outputs.prefix?.value;
    expect(two).toBe(one);
    await first.destroy();
    // The second stack still uses the node's address: its claim stays.
    expect(await claimsOf(pool)).toEqual([String(one).split("/")[0]]);
    await second.destroy();
    expect(await claimsOf(pool)).toEqual([]);
  });

  it("webmesh: a node allocation moved to another pool object on the same ledger keeps its claim", async () => {
    const pool = uniqueName("moved");
    const h = stack("mesh-move");
    const program = (from: "a" | "b") => async () => {
      const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
      const a = new IpPool("mesh-a", { network: "10.43.1.0/29", ledger: ledgerOf(pool) });
      const b = new IpPool("mesh-b", { network: "10.43.1.0/29", ledger: ledgerOf(pool) });
      const mesh = from === "a" ? a : b;
      return { prefix: new IpAllocation("node-1", { pool: mesh, nodeId: "node-1" }).prefix };
    };
    await h.program(program("a"));
    const before = String((await h.up()).outputs.prefix?.value);
    // A replacement (another pool object), created before the old copy is deleted.
    await h.program(program("b"));
    const after = String((await h.up()).outputs.prefix?.value);
    expect(after).toBe(before);
    expect(await claimsOf(pool)).toEqual([before.split("/")[0]]);
    await h.destroy();
    expect(await claimsOf(pool)).toEqual([]);
  });

  it("webmesh: a lost node claim is found by refresh and made again by up; an earlier version's references migrate", async () => {
    const pool = uniqueName("lost");
    const h = stack("mesh-lost");
    await h.program(async () => {
      const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
      const mesh = new IpPool("mesh", { network: "10.43.2.0/29", ledger: ledgerOf(pool) });
      return { prefix: new IpAllocation("node-1", { pool: mesh, nodeId: "node-1" }).prefix };
    });
    const ip = String((await h.up()).outputs.prefix?.value).split("/")[0]!;
    const claimName = (await claimObjects(pool))[0]!.metadata!.name!;
    await kube().core.deleteNamespacedConfigMap({ name: claimName, namespace: ledger.namespace });
    const refresh = await h.refresh();
    expect(refresh.summary.resourceChanges?.update).toBe(1);
    const recorded = (await h.resources()).find((r) => r.urn.endsWith("::node-1"));
    expect(String(recorded?.outputs?.claim)).toContain(`node address ${ip} of node node-1 has no claim`);
    expect((await h.preview()).op("node-1")).toBe("update");
    await h.up();
    expect(await claimsOf(pool)).toEqual([ip]);

    // What an earlier version wrote: no stackId or nodeRef in state, `<stack> <urn>` in the claim.
    const checkpoint = JSON.parse(fs.readFileSync(h.checkpointFile, "utf8"));
    let urn = "";
    for (const r of checkpoint.checkpoint.latest.resources as Record<string, Record<string, unknown>>[]) {
      for (const props of [r.inputs, r.outputs]) {
        if (!props) continue;
        delete props.stackId;
        delete props.nodeRef;
      }
      if (String(r.urn).endsWith("::node-1")) urn = String(r.urn);
    }
    fs.writeFileSync(h.checkpointFile, JSON.stringify(checkpoint));
    const cm = (await claimObjects(pool))[0]!;
    const legacy = `${h.fqStackName} ${urn}`;
    const withoutStackId = ({ stackId: _id, ...data }: Record<string, string> = {}) => data;
    await kube().core.replaceNamespacedConfigMap({
      name: cm.metadata!.name!,
      namespace: ledger.namespace,
      body: { ...cm, data: { ...withoutStackId(cm.data), refs: JSON.stringify([legacy]) } },
    });
    expect((await h.preview()).op("node-1")).toBe("update");
    await h.up();
    const refs = JSON.parse(String((await claimObjects(pool))[0]!.data?.refs)) as string[];
    expect(refs).toHaveLength(1);
    expect(refs[0]).toMatch(/^stack-[0-9a-f]{24} urn:\S+::node-1 [0-9a-f-]{36}$/);
    await h.destroy();
    expect(await claimsOf(pool)).toEqual([]);
  });
});
