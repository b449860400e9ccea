// A hold whose writer crashed before registering it in the markers around it (issue #56 item 3),
// against the real kube-apiserver. The crash is fault-injected: the hold object is written directly,
// as a writer that died (or timed out after the server applied its create) leaves it, with none or
// only some of its marker registrations, and aged past its expiry. Another stack then claims a block
// over it (it finds no registration of the hold, so nothing refuses it). The holder's next plan must
// not try to renew the hold into that block forever: the hold is dropped, with its registrations,
// and the holder planned anew; the other stack's claim stays as it was.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeClients, type KubeClients } from "../../../provider/kube/kube-config";
import { kubeLedger, type KubeLedger } from "../../../provider/ledger/kubernetes/kube-ledger";
import { PoolDefinitions } from "../../../provider/ledger/kubernetes/pool-definition";
import { MarkerStore } from "../../../provider/ledger/kubernetes/marker-store";
import { entriesOverlap, entrySpan } from "../../../provider/ledger/held-entry";
import { nextFreeBlock, type ReadonlyAddressSet } from "../../../provider/allocator";
import type { PlanRequest } from "../../../provider/ledger/ledger";
import { poolChooser, resolvePool } from "../../../provider/resources/pool/pool-spec";
import { poolDefinition } from "../../../provider/resources/pool/canonical-definition";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../../support/kube";

const admin = (): KubeClients => {
  process.env.KUBECONFIG = testKubeconfig();
  return kubeClients({ context: "admin@test" });
};
const urn = (stack: string, name: string) => `urn:pulumi:${stack}::p::egress-ipam:PrefixAllocation::${name}`;
const errorOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as { code: string; message: string },
  );
const subnet = "10.48.0.0/16";
const resolved = resolvePool({ ranges: [{ subnet }], prefixLengths: { min: 24, max: 27 } }).pool!;

/** A request of `owner` for one /`length` block (or, without it, one address) of the pool. */
const request = (owner: string, length?: number): PlanRequest => {
  if (length === undefined) return { pool: "p", owner, choose: poolChooser(resolved) };
  const rangeSet = resolvePool({ ranges: [{ subnet }] }).pool!.rangeSets[0]!;
  const choose = (taken: ReadonlyAddressSet, latest: readonly string[]) =>
    nextFreeBlock({ rangeSet, prefixLength: length, taken, cursor: latest.at(-1) });
  return { pool: "p", owner, prefixLength: length, choose };
};

describe("a hold whose writer crashed before registering it (fault-injected)", () => {
  let ns = "";
  beforeAll(async () => {
    ns = await freshNamespace("crashed");
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

  it.each([
    // entry held by the crashed writer, the markers it did register in, the block claimed over it
    ["10.48.1.64/26", [], "10.48.1.0/24", 26],
    ["10.48.1.64/26", ["10.48.1.0/25"], "10.48.1.0/24", 26],
    ["10.48.1.77", ["10.48.1.64/27", "10.48.1.64/26"], "10.48.1.0/25", undefined],
  ])(
    "fault-injected crash: %s written but registered only in %j, lapsed, %s claimed over it by another stack: the holder's next plan drops it and plans anew",
    async (entry, registered, block, length) => {
      const pool = uniqueName("crashed");
      await new PoolDefinitions(config(pool), admin()).agree({
        definition: poolDefinition(resolved),
        stack: "o/net/prod",
        owner: "urn:pool",
      });
      const [a, b] = [ledger("a", pool), ledger("b", pool)];
      const owner = urn("a", "web");
      // The crashed writer's hold: the object exists, its registrations do not (or only some), and
      // it has lapsed.
      const hold = (await a.store.create(entry, { ...a.holdFields(owner, 1), expires: Date.now() - 1_000 }))!;
      const markerStore = new MarkerStore(a.store);
      for (const m of registered) await markerStore.create(m, { [entry]: `${hold.uid}/crashed` });
      // Another stack claims a block around it: nothing registered at the block's name refuses it.
      const other = await b.plan({ ...request(urn("b", "net")), requested: [block] });
      await b.reserve("p", urn("b", "net"), other, false, "ib");
      const claimed = (await b.store.read(block))!;
      expect(claimed.state).toBe("claim");

      const first = await errorOf(a.plan(request(owner, length)));
      expect(first?.code).toBe("POOL_CHANGED");
      expect(first?.message).toContain(entry);
      expect(first?.message).toContain(`inside block ${block}, held by ${urn("b", "net")} of stack o/p/b`);
      expect(await a.store.read(entry)).toBeUndefined();
      // Its partial registrations went with it.
      const left = (await markerStore.list()).filter((m) =>
        Object.values(m.children).some((t) => t.startsWith(hold.uid)),
      );
      expect(left).toEqual([]);

      // The next check gets what the failed one held for it, outside the other stack's block.
      const again = await a.plan(request(owner, length));
      expect(again.ips).toHaveLength(1);
      expect(again.ips[0]).not.toBe(entry);
      expect(entriesOverlap(entrySpan(again.ips[0]!), entrySpan(block))).toBe(false);
      expect(first?.message).toContain(`${again.ips[0]} is held for it now`);
      await a.reserve("p", owner, again, false, "ia");
      expect((await a.store.read(again.ips[0]!))?.state).toBe("claim");
      // The other stack's claim is as it was.
      expect((await b.store.read(block))?.resourceVersion).toBe(claimed.resourceVersion);
    },
    120_000,
  );
});
