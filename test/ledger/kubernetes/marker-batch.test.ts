// Marker writes batched per marker per process, against the in-memory API server (fake-configmaps.ts):
// entries registered at once in one process write each marker a couple of times, not once per
// entry; a batch that keeps losing to other writers (fault-injected 409s) keeps its turn past 8
// attempts; a marker and a quota counter stop short of the object limit (exact byte arithmetic),
// refusing with LEDGER_FULL before the write that would not fit.
import { afterEach, describe, expect, it } from "vitest";
import type * as k8s from "@kubernetes/client-node";
import type { KubeClients } from "../../../provider/kube/kube-config";
import { ClaimStore, type ClaimFields } from "../../../provider/ledger/kubernetes/claim-store";
import { entryWrites } from "../../../provider/ledger/kubernetes/entry-writes";
import { PoolDefinitions } from "../../../provider/ledger/kubernetes/pool-definition";
import { applyChanges, markerBytes } from "../../../provider/ledger/kubernetes/marker-batch";
import { dataBytes } from "../../../provider/ledger/kubernetes/object-sizes";
import { counterName } from "../../../provider/ledger/kubernetes/quota-counter";
import { canonicalQuotas, quotaGroupOf } from "../../../provider/ledger/quota-rules";
import { FakeConfigMaps } from "./fake-configmaps";

let pools = 0;
const rule = { min: 24, max: 27 };
const hold = (who: string): ClaimFields => ({
  state: "hold",
  stack: `o/p/${who}`,
  stackId: `id-${who}`,
  owner: `urn:${who}`,
  seq: 0,
  expires: Date.now() + 60_000,
});

/** Counts the writes (create, update, delete) of marker objects through `clients`; `fail409` fails the next n updates of markers. */
function counting(clients: KubeClients) {
  const count = { markers: 0, all: 0, injected: 0, fail409: 0, failing: "" };
  const core = clients.core as unknown as Record<
    string,
    (a: { body?: k8s.V1ConfigMap; name?: string }) => Promise<unknown>
  >;
  const isMarker = (a: { body?: k8s.V1ConfigMap }) =>
    a.body?.metadata?.labels?.["egress-ipam/role"] === "marker";
  const wrapped = Object.fromEntries(
    Object.entries(core).map(([verb, fn]) => [
      verb,
      (a: { body?: k8s.V1ConfigMap; name?: string }) => {
        if (/^(create|replace|delete)/.test(verb)) {
          count.all++;
          if (isMarker(a) || (verb.startsWith("delete") && /-\d+$/.test(a.name ?? ""))) count.markers++;
          if (verb.startsWith("replace") && isMarker(a) && a.name === count.failing && count.fail409 > 0) {
            count.fail409--;
            count.injected++;
            return Promise.reject(Object.assign(new Error("409 Conflict (injected)"), { code: 409 }));
          }
        }
        return fn(a);
      },
    ]),
  );
  return { clients: { ...clients, core: wrapped } as unknown as KubeClients, count };
}

/** A pool with the rule {24, 27} (none with `plain`) and `quotas`, its writes counted. */
async function pool(quotas?: object, plain = false) {
  const fake = new FakeConfigMaps(1);
  const name = `mb${++pools}-${Math.random().toString(36).slice(2, 8)}`;
  const { clients, count } = counting(fake.clients());
  const defs = new PoolDefinitions(
    { name, namespace: "ipam", lockDuration: 1, lockAcquireTimeout: 1 },
    clients,
  );
  await defs.agree({
    definition: JSON.stringify({
      ranges: [{ subnet: "10.0.0.0/16" }],
      ...(plain ? {} : { prefixLengths: rule }),
    }),
    stack: "o/net/prod",
    owner: "urn:pool",
    ...(quotas ? { quotas: canonicalQuotas(quotas)! } : {}),
  });
  const store = new ClaimStore(clients, "ipam", name);
  const writes = entryWrites(store, `pool "${name}"`, () => undefined);
  count.markers = 0;
  count.all = 0;
  return { fake, name, store, writes, count };
}

afterEach(() => {
  delete process.env.EGRESS_IPAM_LEDGER_OBJECT_BYTES;
});

describe("marker writes of one process", () => {
  it("32 addresses of one /24 held at once write its 15 markers at most 3 times each (one write per entry per marker before: 128)", async () => {
    const { writes, store, count } = await pool();
    const ips = Array.from({ length: 32 }, (_, i) => `10.0.0.${i * 8 + 1}`);
    const written = await Promise.all(ips.map((ip, i) => writes.write(ip, undefined, hold(`s${i}`))));
    expect(written.every(Boolean)).toBe(true);
    const markers = await writes.markers.store.list();
    expect(markers).toHaveLength(15); // one /24, two /25s, four /26s, eight /27s
    for (const m of markers) {
      // Each lists exactly the addresses inside its block.
      const [base, length] = [Number(m.block.split("/")[0]!.split(".")[3]), Number(m.block.split("/")[1])];
      const inside = ips.filter((ip) => {
        const last = Number(ip.split(".")[3]);
        return last >= base && last < base + 2 ** (32 - length);
      });
      expect(Object.keys(m.children).sort()).toEqual(inside.sort());
    }
    expect(count.markers).toBeLessThanOrEqual(45);
    // And they go as they came: released at once, every marker deleted, a few writes each.
    count.markers = 0;
    await Promise.all((await store.list()).map((c) => writes.remove(c)));
    expect(await writes.markers.store.list()).toEqual([]);
    expect(count.markers).toBeLessThanOrEqual(45);
  });

  it("fault-injected: a batch whose marker write loses 10 times in a row (another writer each time) still lands", async () => {
    const { writes, count, name } = await pool();
    const first = await writes.write("10.0.0.1", undefined, hold("a"));
    count.failing = `${name}.10.0.0.0-24`;
    count.fail409 = 10;
    const started = Date.now();
    const second = await writes.write("10.0.0.2", undefined, hold("b"));
    expect(second?.ip).toBe("10.0.0.2");
    expect(count.injected).toBe(10);
    const m = (await writes.markers.store.list()).find((x) => x.block === "10.0.0.0/24")!;
    expect(Object.keys(m.children).sort()).toEqual([first!.ip, "10.0.0.2"]);
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 40_000);
});

describe("the object limit", () => {
  it.each([300, 1000, 4096])(
    "a marker under a %i-byte limit takes entries until the next would not fit, and refuses it with LEDGER_FULL",
    (limit) => {
      process.env.EGRESS_IPAM_LEDGER_OBJECT_BYTES = String(limit);
      let listed: Record<string, string> = {};
      let refused: Error | undefined;
      let i = 0;
      for (; i < 1000 && !refused; i++) {
        const entry = `10.0.${i >> 8}.${i & 255}`;
        const out = applyChanges(
          "10.0.0.0/16",
          listed,
          [{ kind: "register", entry, uid: `uid-${i}`, fresh: true }],
          "p",
        );
        refused = out.results[0];
        if (refused) {
          // It would not have fit: what it would list is over the limit, by the bytes a write sends.
          expect(markerBytes("10.0.0.0/16", { ...listed, [entry]: `uid-${i}/000000000000` })).toBeGreaterThan(
            limit,
          );
        } else listed = out.children;
        expect(markerBytes("10.0.0.0/16", listed)).toBeLessThanOrEqual(limit);
      }
      expect(refused).toMatchObject({ code: "LEDGER_FULL" });
      expect(refused!.message).toContain(
        `the marker of 10.0.0.0/16 lists ${Object.keys(listed).length} entries`,
      );
      expect(refused!.message).toContain(`past ${limit} bytes`);
      // A removal then makes room for one more.
      const [gone] = Object.entries(listed)[0]!;
      const after = applyChanges(
        "10.0.0.0/16",
        listed,
        [
          { kind: "remove", entry: gone, uid: listed[gone]!.split("/")[0]! },
          { kind: "register", entry: "10.0.99.1", uid: "uid-x", fresh: true },
        ],
        "p",
      );
      expect(after.results).toEqual([undefined, undefined]);
      expect(markerBytes("10.0.0.0/16", after.children)).toBeLessThanOrEqual(limit);
    },
  );

  it("a quota counter under a small limit refuses the entry that would not fit with LEDGER_FULL, nothing of it held", async () => {
    process.env.EGRESS_IPAM_LEDGER_OBJECT_BYTES = "700";
    const quotas = { default: 1000 };
    const { fake, name, writes, store } = await pool(quotas, true);
    const results = [];
    for (let i = 0; i < 40; i++)
      results.push(await writes.write(`10.0.1.${i}`, undefined, hold("t")).catch((e: unknown) => e as Error));
    const refused = results.filter((r) => r instanceof Error) as (Error & { code?: string })[];
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((e) => e.code === "LEDGER_FULL")).toBe(true);
    expect(refused[0]!.message).toMatch(
      /quota counter ".*" of .* lists \d+ entries \(\d+ bytes\).*past 700 bytes/,
    );
    const counter = fake.objects.get(counterName(name, quotaGroupOf(quotas, "o/p/t", "id-t")!))!;
    expect(dataBytes(counter.data)).toBeLessThanOrEqual(700);
    const held = (await store.list()).map((c) => c.ip);
    expect(held).toHaveLength(40 - refused.length);
    expect(Object.keys(counter.data!).filter((k) => k.startsWith(`${name}.`))).toHaveLength(held.length);
  });
});
