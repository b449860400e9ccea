// Lapsed holds are collected (issue #56 item 4), against the real kube-apiserver. A hold is what a
// preview (or a check of an `up` that failed) leaves: its object, its tokens in the markers around
// it and its key in its quota counter. Nothing ever deleted them: each abandoned preview grew the
// pool's objects for good. Now a plan of another stack deletes the lapsed holds it meets (15 minutes
// past their expiry, preconditioned on what was read, with their registrations), a bounded number
// per plan, never its own stack's (it renews those).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeClients, type KubeClients } from "../../../provider/kube/kube-config";
import { kubeLedger, type KubeLedger } from "../../../provider/ledger/kubernetes/kube-ledger";
import { PoolDefinitions } from "../../../provider/ledger/kubernetes/pool-definition";
import { MarkerStore } from "../../../provider/ledger/kubernetes/marker-store";
import { counterName } from "../../../provider/ledger/kubernetes/quota-counter";
import { collectPerPlan } from "../../../provider/ledger/kubernetes/lapsed-holds";
import type { Claim } from "../../../provider/ledger/kubernetes/claim-store";
import { canonicalQuotas, quotaGroupOf } from "../../../provider/ledger/quota-rules";
import { poolChooser, resolvePool } from "../../../provider/resources/pool/pool-spec";
import { poolDefinition } from "../../../provider/resources/pool/canonical-definition";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../../support/kube";

const admin = (): KubeClients => {
  process.env.KUBECONFIG = testKubeconfig();
  return kubeClients({ context: "admin@test" });
};
const subnet = "10.53.0.0/16";
const resolved = resolvePool({ ranges: [{ subnet }], prefixLengths: { min: 24, max: 27 } }).pool!;
const choose = poolChooser(resolved);
const quotas = { default: 50 };
const urn = (stack: string, name: string) => `urn:pulumi:${stack}::p::egress-ipam:IpAllocation::${name}`;

/** `c` aged: it lapsed `ago` ms before now (its registrations stay: they are by its uid). */
async function age(l: KubeLedger, c: Claim, ago: number): Promise<Claim> {
  const { ip: _ip, resourceVersion: _rv, uid: _uid, created: _c, malformed: _m, ...fields } = c;
  return l.store.replace(c, { ...fields, expires: Date.now() - ago });
}

describe("lapsed holds are collected by planners", () => {
  let ns = "";
  beforeAll(async () => {
    ns = await freshNamespace("lapsed");
  });
  afterAll(() => kube().core.deleteNamespace({ name: ns }));

  const config = (name: string) => ({
    name,
    namespace: ns,
    lockDuration: 10_000,
    lockAcquireTimeout: 60_000,
  });
  const ledger = (stack: string, name: string): KubeLedger =>
    kubeLedger({ stack: `o/p/${stack}`, stackId: `id-${stack}`, clients: admin(), ledger: config(name) });
  const define = (name: string) =>
    new PoolDefinitions(config(name), admin()).agree({
      definition: poolDefinition(resolved),
      stack: "o/net/prod",
      owner: "urn:pool",
      quotas: canonicalQuotas(quotas)!,
    });
  /** Where the object `uid` is still registered: marker names, and counter keys of stack `stack`. */
  const registrations = async (l: KubeLedger, name: string, uid: string, stack: string) => {
    const markers = (await new MarkerStore(l.store).list())
      .filter((m) => Object.values(m.children).some((t) => t.startsWith(`${uid}/`)))
      .map((m) => m.block);
    const counter = counterName(name, quotaGroupOf(quotas, stack, `id-${stack.split("/")[2]}`)!);
    const cm = await kube()
      .core.readNamespacedConfigMap({ name: counter, namespace: ns })
      .catch(() => undefined);
    const keys = Object.entries(cm?.data ?? {}).filter(([, v]) =>
      v.split(" ").some((t) => t.startsWith(uid)),
    );
    return { markers: markers.sort(), counted: keys.map(([k]) => k) };
  };

  it("an abandoned preview's hold, lapsed, is gone with its marker tokens and counter key after another stack's plan", async () => {
    const pool = uniqueName("lapsed");
    await define(pool);
    const [a, b] = [ledger("a", pool), ledger("b", pool)];
    // Stack a previews and never runs up: its hold stays, registered in 4 markers and counted.
    const previewed = await a.plan({ pool: "p", owner: urn("a", "web"), choose });
    const hold = (await a.store.read(previewed.ips[0]!))!;
    expect(hold.state).toBe("hold");
    const before = await registrations(a, pool, hold.uid, "o/p/a");
    expect(before.markers).toHaveLength(4);
    expect(before.counted).toHaveLength(1);
    // Lapsed 10 minutes ago: its preview's up may still come and renew it, so it stays.
    const recent = await age(a, hold, 10 * 60_000);
    await b.plan({ pool: "p", owner: urn("b", "one"), choose, requested: ["10.53.9.1"] });
    expect((await a.store.read(hold.ip))?.resourceVersion).toBe(recent.resourceVersion);

    // Lapsed 20 minutes ago: the next plan of another stack collects it, with its registrations.
    await age(a, recent, 20 * 60_000);
    await b.plan({ pool: "p", owner: urn("b", "two"), choose, requested: ["10.53.9.2"] });
    expect(await a.store.read(hold.ip)).toBeUndefined();
    expect(await registrations(a, pool, hold.uid, "o/p/a")).toEqual({ markers: [], counted: [] });
    // b's own holds are as they were: live, registered, counted.
    const mine = (await b.store.list()).filter((c) => c.stack === "o/p/b");
    expect(mine.map((c) => c.state)).toEqual(["hold", "hold"]);
    for (const c of mine) expect((await registrations(b, pool, c.uid, "o/p/b")).markers).toHaveLength(4);
  }, 120_000);

  it("never collects a lapsed hold of its own stack (it renews it), and collects at most a bounded number per plan", async () => {
    const pool = uniqueName("bounded");
    await define(pool);
    const [a, b] = [ledger("a", pool), ledger("b", pool)];
    const n = collectPerPlan + 3;
    const plans = [];
    for (let i = 0; i < n; i++) plans.push(await a.plan({ pool: "p", owner: urn("a", `x${i}`), choose }));
    const own = await b.plan({ pool: "p", owner: urn("b", "own"), choose, requested: ["10.53.9.1"] });
    for (const c of await a.store.list()) await age(a, c, 20 * 60_000);

    // b plans again: its own lapsed hold is renewed, and collectPerPlan of a's go.
    const again = await b.plan({ pool: "p", owner: urn("b", "own"), choose, requested: ["10.53.9.1"] });
    expect(again.ips).toEqual(own.ips);
    const renewed = (await b.store.read(own.ips[0]!))!;
    expect(renewed.expires).toBeGreaterThan(Date.now());
    const left = (await a.store.list()).filter((c) => c.stack === "o/p/a");
    expect(left).toHaveLength(n - collectPerPlan);
    // The next plan takes the rest.
    await b.plan({ pool: "p", owner: urn("b", "other"), choose, requested: ["10.53.9.2"] });
    expect((await a.store.list()).filter((c) => c.stack === "o/p/a")).toEqual([]);
    expect((await new MarkerStore(a.store).list()).flatMap((m) => Object.keys(m.children)).sort()).toEqual(
      (await b.store.list())
        .map((c) => c.ip)
        .flatMap((ip) => [ip, ip, ip, ip])
        .sort(),
    );
  }, 180_000);
});
