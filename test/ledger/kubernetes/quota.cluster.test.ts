// Quotas of a shared pool through the Kubernetes ledger against the real kube-apiserver: two stacks
// of one pattern planning at once (two ledgers in this process, and two processes) never hold more
// than their limit together, and every refusal is QUOTA_EXCEEDED; preview (plan) and create
// (reserve) are refused naming the quota, claiming what was planned needs no room, and a release
// frees room, and so does deleting the holds a stack left (at its pool's delete); a pool without
// quotas has no counter object.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeClients, type KubeClients } from "../../../provider/kube/kube-config";
import { kubeLedger, type KubeLedger } from "../../../provider/ledger/kubernetes/kube-ledger";
import { PoolDefinitions } from "../../../provider/ledger/kubernetes/pool-definition";
import { counterName } from "../../../provider/ledger/kubernetes/quota-counter";
import { isLive } from "../../../provider/ledger/kubernetes/claim-store";
import { canonicalQuotas, quotaGroupOf, type PoolQuotas } from "../../../provider/ledger/quota-rules";
import { poolChooser, resolvePool } from "../../../provider/resources/pool/pool-spec";
import { poolDefinition } from "../../../provider/resources/pool/canonical-definition";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../../support/kube";
import { LedgerWorker } from "../../support/ledger-worker";

const admin = (): KubeClients => {
  process.env.KUBECONFIG = testKubeconfig();
  return kubeClients({ context: "admin@test" });
};
const subnet = "10.40.0.0/24";
const choose = poolChooser(resolvePool({ ranges: [{ subnet }] }).pool!);
const urn = (stack: string, name: string) => `urn:pulumi:${stack}::p::egress-ipam:IpAllocation::${name}`;
const errorOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as { code: string; message: string },
  );

describe("quotas of a shared pool", () => {
  let ns = "";
  beforeAll(async () => {
    ns = await freshNamespace("quota");
  });
  afterAll(() => kube().core.deleteNamespace({ name: ns }));

  const config = (name: string) => ({
    name,
    namespace: ns,
    lockDuration: 10_000,
    lockAcquireTimeout: 60_000,
  });
  /** Stores the pool's definition as its IpPool's `up` does, then `quotas` in it as its owner sets them. */
  const define = async (name: string, quotas?: PoolQuotas) => {
    const definition = poolDefinition(resolvePool({ ranges: [{ subnet }] }).pool!);
    await new PoolDefinitions(config(name), admin()).agree({
      definition,
      stack: "o/net/prod",
      owner: "urn:pool",
    });
    if (!quotas) return;
    const { core } = kube();
    const cm = await core.readNamespacedConfigMap({ name: `${name}.pool`, namespace: ns });
    cm.data = { ...cm.data, quotas: canonicalQuotas(quotas)! };
    await core.replaceNamespacedConfigMap({ name: `${name}.pool`, namespace: ns, body: cm });
  };
  const ledger = (stack: string, name: string, stackId?: string): KubeLedger =>
    kubeLedger({ stack, ...(stackId ? { stackId } : {}), clients: admin(), ledger: config(name) });
  /** The claim object names the counter of `stack`'s group lists. */
  const listed = async (name: string, q: PoolQuotas, stack: string) => {
    const counter = counterName(name, quotaGroupOf(q, stack)!);
    const cm = await kube().core.readNamespacedConfigMap({ name: counter, namespace: ns });
    return Object.keys(cm.data ?? {})
      .filter((k) => k.startsWith(`${name}.`))
      .map((k) => k.slice(name.length + 1))
      .sort();
  };
  const live = async (l: KubeLedger) => (await l.store.list()).filter((c) => isLive(c, Date.now()));

  it("two stacks of one pattern, 6 plans each at once from two ledgers, under a limit of 8: 8 held, 4 refused with QUOTA_EXCEEDED", async () => {
    const q = { stacks: { "team/*": 8 } };
    for (let round = 0; round < 3; round++) {
      const name = uniqueName("race");
      await define(name, q);
      const [a, b] = [ledger("o/team/a", name, "id-a"), ledger("o/team/b", name, "id-b")];
      const plans = [a, b].flatMap((l, s) =>
        Array.from({ length: 6 }, (_, i) => l.plan({ pool: "p", owner: urn(`s${s}`, `x${i}`), choose })),
      );
      const results = await Promise.allSettled(plans);
      const refused = results.flatMap((r) => (r.status === "rejected" ? [r.reason as { code: string }] : []));
      expect(refused.map((e) => e.code)).toEqual(Array(4).fill("QUOTA_EXCEEDED"));
      const held = (await live(a)).map((c) => c.ip);
      expect(held).toHaveLength(8);
      expect(await listed(name, q, "o/team/a")).toEqual([...held].sort());
    }
  }, 300_000);

  it("two stacks of one pattern in two processes, 6 plans each at once, under a limit of 8: 8 held", async () => {
    const q = { stacks: { "team/*": 8 } };
    const name = uniqueName("procs");
    await define(name, q);
    const [a, b] = await Promise.all([LedgerWorker.start(), LedgerWorker.start()]);
    try {
      const plan = { op: "plan", namespace: ns, pool: name, subnet, count: 6 };
      const replies = await Promise.all([
        a.send({ ...plan, stack: "o/team/a" }),
        b.send({ ...plan, stack: "o/team/b" }),
      ]);
      // A worker answers with its first failure, if one of its plans failed.
      for (const r of replies) if (!r.ok) expect(r.code).toBe("QUOTA_EXCEEDED");
      const held = (await live(ledger("o/x/y", name))).map((c) => c.ip);
      expect(held).toHaveLength(8);
      expect(await listed(name, q, "o/team/a")).toEqual([...held].sort());
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 300_000);

  it("preview and create past the quota are refused naming it; claiming what was planned needs no room; a release frees room", async () => {
    const name = uniqueName("limit");
    await define(name, { default: 2 });
    const l = ledger("o/app/prod", name, "id-prod");
    const owners = ["a", "b", "c"].map((n) => urn("prod", n));
    const planned = [
      await l.plan({ pool: "p", owner: owners[0]!, choose }),
      await l.plan({ pool: "p", owner: owners[1]!, choose }),
    ];
    const preview = await errorOf(l.plan({ pool: "p", owner: owners[2]!, choose }));
    expect(preview?.code).toBe("QUOTA_EXCEEDED");
    expect(preview?.message).toMatch(
      new RegExp(
        `^stack o/app/prod is at the default quota of pool "${name}" \\(namespace "${ns}"\\): 2 addresses, ` +
          `set by stack o/net/prod \\(urn:pool\\); it holds 2 addresses and this would add 1 address`,
      ),
    );
    for (const [i, p] of planned.entries()) await l.reserve("p", owners[i]!, p, false, `i${i}`);
    const create = await errorOf(l.reserve("p", owners[2]!, { ips: ["10.40.0.200"], seq: 0 }, false, "i2"));
    expect(create?.code).toBe("QUOTA_EXCEEDED");
    expect(await l.store.read("10.40.0.200")).toBeUndefined();
    await l.release("p", owners[0]!, planned[0]!.ips, "i0");
    const third = await l.plan({ pool: "p", owner: owners[2]!, choose });
    await l.reserve("p", owners[2]!, third, false, "i2");
    expect((await live(l)).map((c) => c.state)).toEqual(["claim", "claim"]);
  }, 120_000);

  it("releaseHolds deletes the stack's holds with their counter entries; its claims and another stack's holds stay", async () => {
    const q = { stacks: { "team/*": 4 } };
    const name = uniqueName("holds");
    await define(name, q);
    const [a, b] = [ledger("o/team/a", name, "id-a"), ledger("o/team/b", name, "id-b")];
    const claimed = await a.plan({ pool: "p", owner: urn("a", "x0"), choose });
    await a.reserve("p", urn("a", "x0"), claimed, false, "i0");
    const left = await a.plan({ pool: "p", owner: urn("a", "x1"), choose });
    const other = await b.plan({ pool: "p", owner: urn("b", "y0"), choose });
    expect(await listed(name, q, "o/team/a")).toHaveLength(3);
    await a.releaseHolds();
    expect(await a.store.read(left.ips[0]!)).toBeUndefined();
    expect((await live(a)).map((c) => [c.ip, c.stack, c.state]).sort()).toEqual(
      [
        [claimed.ips[0], "o/team/a", "claim"],
        [other.ips[0], "o/team/b", "hold"],
      ].sort(),
    );
    expect(await listed(name, q, "o/team/a")).toEqual([claimed.ips[0], other.ips[0]].sort());
  }, 60_000);

  it("a pool without quotas has no counter object", async () => {
    const name = uniqueName("free");
    await define(name);
    const l = ledger("o/app/prod", name, "id-prod");
    const p = await l.plan({ pool: "p", owner: urn("prod", "a"), choose });
    await l.reserve("p", urn("prod", "a"), p, false, "i");
    const objects = await kube().core.listNamespacedConfigMap({
      namespace: ns,
      labelSelector: `egress-ipam/pool=${name},egress-ipam/role=quota`,
    });
    expect(objects.items).toEqual([]);
  }, 60_000);
});
