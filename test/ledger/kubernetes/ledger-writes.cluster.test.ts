// What a shared pool with a quota and a prefix rule writes to the real kube-apiserver, and how far
// its objects grow. Many allocations of one pool at once in one process (a deployment's parallel
// checks and creates), every write counted on its way to the server (counting-clients.ts): marker
// and counter writes are batched per object, so they are far fewer than one per allocation per
// marker. And a pool filled past a small object limit (EGRESS_IPAM_LEDGER_OBJECT_BYTES, read by the
// ledger at every registration): the plan that would take the /24 marker (or the group's counter)
// past it is refused with LEDGER_FULL at preview, nothing of it held, every object stays under the
// limit on the server, and a release makes room again.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { kubeClients, type KubeClients } from "../../../provider/kube/kube-config";
import { kubeLedger } from "../../../provider/ledger/kubernetes/kube-ledger";
import { PoolDefinitions } from "../../../provider/ledger/kubernetes/pool-definition";
import { objectSizes } from "../../../provider/ledger/kubernetes/object-sizes";
import { canonicalQuotas, type PoolQuotas } from "../../../provider/ledger/quota-rules";
import { poolChooser, resolvePool } from "../../../provider/resources/pool/pool-spec";
import { poolDefinition } from "../../../provider/resources/pool/canonical-definition";
import { countingClients } from "../../support/counting-clients";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../../support/kube";

const subnet = "10.41.0.0/22";
const rule = { min: 24, max: 27 };
const pool = resolvePool({ ranges: [{ subnet }], prefixLengths: rule }).pool!;
const choose = poolChooser(pool);
const urn = (name: string) => `urn:pulumi:s::p::egress-ipam:IpAllocation::${name}`;
const admin = (): KubeClients => {
  process.env.KUBECONFIG = testKubeconfig();
  return kubeClients({ context: "admin@test" });
};
const errorOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as { code: string; message: string },
  );

describe("a shared pool's writes and object sizes", () => {
  let ns = "";
  beforeAll(async () => {
    ns = await freshNamespace("writes");
  });
  afterAll(() => kube().core.deleteNamespace({ name: ns }));
  afterEach(() => {
    delete process.env.EGRESS_IPAM_LEDGER_OBJECT_BYTES;
  });

  const config = (name: string) => ({
    name,
    namespace: ns,
    lockDuration: 10_000,
    lockAcquireTimeout: 60_000,
  });
  /** Stores the pool's definition with the rule {24, 27} and `quotas`, as its owner's `up` does. */
  const define = async (name: string, quotas?: PoolQuotas) => {
    await new PoolDefinitions(config(name), admin()).agree({
      definition: poolDefinition(pool),
      stack: "o/net/prod",
      owner: "urn:pool",
      ...(quotas ? { quotas: canonicalQuotas(quotas)! } : {}),
    });
  };
  const ledger = (name: string, clients = admin()) =>
    kubeLedger({ stack: "o/app/prod", stackId: "id-prod", clients, ledger: config(name) });

  it("64 allocations at once in one process with a quota and the rule {24, 27}: markers and the counter written a few times each, not once per allocation", async () => {
    const name = uniqueName("batch");
    await define(name, { default: 1000 });
    const { clients, counts } = countingClients(admin());
    const l = ledger(name, clients);
    const owners = Array.from({ length: 64 }, (_, i) => urn(`a${i}`));
    const plans = await Promise.all(owners.map((owner) => l.plan({ pool: "p", owner, choose })));
    const atPlan = { ...counts };
    await Promise.all(owners.map((owner, i) => l.reserve("p", owner, plans[i]!, false, `i${i}`)));
    const ips = plans.map((p) => p.ips[0]!);
    expect(new Set(ips).size).toBe(64);
    const claims = await l.store.list();
    expect(
      claims
        .filter((c) => c.state === "claim")
        .map((c) => c.ip)
        .sort(),
    ).toEqual([...ips].sort());
    // A marker per block of lengths 24 to 27 around an address held; one counter.
    const blocks = new Set(
      ips.flatMap((ip) => {
        const [a, b, c, d] = ip.split(".").map(Number) as [number, number, number, number];
        return [24, 25, 26, 27].map((len) => `${a}.${b}.${c}.${d & (256 - 2 ** (32 - len))}/${len}`);
      }),
    );
    const markers = (await objectSizes(admin(), ns, name)).filter((o) => o.role === "marker");
    expect(markers).toHaveLength(blocks.size);
    console.log(
      `64 allocations (plan, then reserve, all at once): ${counts.configMaps} ConfigMap writes ` +
        `(${(counts.configMaps / 64).toFixed(2)} per allocation), of which ${counts.markers} marker writes ` +
        `(${atPlan.markers} at plan) and ${counts.counters} counter writes; ${counts.leases} Lease writes`,
    );
    // One per marker per batch: a handful per marker, never one per entry per marker (64 × 4 = 256).
    expect(atPlan.markers).toBeLessThanOrEqual(3 * blocks.size);
    expect(counts.counters).toBeLessThanOrEqual(8); // one per batch (5 measured), never one per allocation (64)
    // Per allocation: its hold created (lapsed), written live, claimed: 3; plus its share of the batches.
    expect(counts.configMaps).toBeLessThanOrEqual(3 * 64 + 3 * blocks.size + 8);
    // Released at once: the markers go, a few writes each.
    const before = counts.markers;
    await Promise.all(owners.map((owner, i) => l.release("p", owner, [ips[i]!], `i${i}`)));
    expect((await objectSizes(admin(), ns, name)).filter((o) => o.role === "marker")).toEqual([]);
    expect(counts.markers - before).toBeLessThanOrEqual(3 * blocks.size);
  }, 180_000);

  it("filled past a 2,000-byte object limit: the plan that would grow the /24 marker past it is refused with LEDGER_FULL at preview, nothing held; a release makes room", async () => {
    const name = uniqueName("full");
    await define(name);
    process.env.EGRESS_IPAM_LEDGER_OBJECT_BYTES = "2000";
    const l = ledger(name);
    const held: { owner: string; ip: string }[] = [];
    let refused: { code: string; message: string } | undefined;
    for (let i = 0; i < 60 && !refused; i++) {
      const owner = urn(`f${i}`);
      const plan = await l.plan({ pool: "p", owner, choose }).catch((e: unknown) => {
        refused = e as { code: string; message: string };
        return undefined;
      });
      if (plan) held.push({ owner, ip: plan.ips[0]! });
    }
    expect(refused?.code).toBe("LEDGER_FULL");
    expect(refused?.message).toMatch(
      new RegExp(
        `the marker of 10\\.41\\.0\\.0/24 lists ${held.length} entries inside it \\(\\d+ bytes\\).*past 2000 bytes`,
      ),
    );
    // Every object on the server is under the limit, and the refused plan left no object.
    const sizes = await objectSizes(admin(), ns, name);
    expect(Math.max(...sizes.map((o) => o.bytes))).toBeLessThanOrEqual(2000);
    expect((await l.store.list()).map((c) => c.ip).sort()).toEqual(held.map((h) => h.ip).sort());
    // A release makes room: the next plan is held.
    await l.release("p", held[0]!.owner, [held[0]!.ip]);
    const again = await l.plan({ pool: "p", owner: urn("after"), choose });
    expect(again.ips).toHaveLength(1);
  }, 180_000);

  it("a quota group filled past a 1,500-byte object limit: the plan that would grow its counter past it is refused with LEDGER_FULL, the counter under the limit", async () => {
    const name = uniqueName("cfull");
    // No rule here (markers would fill first): a plain pool with a quota.
    await new PoolDefinitions(config(name), admin()).agree({
      definition: poolDefinition(resolvePool({ ranges: [{ subnet }] }).pool!),
      stack: "o/net/prod",
      owner: "urn:pool",
      quotas: canonicalQuotas({ default: 1000 })!,
    });
    process.env.EGRESS_IPAM_LEDGER_OBJECT_BYTES = "1500";
    const l = ledger(name);
    let refused: { code: string; message: string } | undefined;
    let n = 0;
    for (; n < 60 && !refused; n++)
      refused = await errorOf(l.plan({ pool: "p", owner: urn(`c${n}`), choose }));
    expect(refused?.code).toBe("LEDGER_FULL");
    expect(refused?.message).toMatch(
      /quota counter ".*\.quota-[0-9a-f]{16}" of the default quota .* past 1500 bytes/,
    );
    const counter = (await objectSizes(admin(), ns, name)).find((o) => o.role === "quota")!;
    expect(counter.bytes).toBeLessThanOrEqual(1500);
    expect(await l.store.list()).toHaveLength(n - 1);
  }, 180_000);
});
