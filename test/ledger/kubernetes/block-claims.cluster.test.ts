// Blocks through the Kubernetes ledger against the real kube-apiserver: two stacks in two processes
// filling a range of one /24 with /26s and /27s at once; a /24 and a /25 inside it claimed at once (no plan, no
// Lease: only the API server decides), round after round; release and claim again, with no marker
// left; an address inside a block refused naming the block's holder; a rule added to a pool that
// has address claims.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeClients, type KubeClients } from "../../../provider/kube/kube-config";
import { kubeLedger, type KubeLedger } from "../../../provider/ledger/kubernetes/kube-ledger";
import { PoolDefinitions } from "../../../provider/ledger/kubernetes/pool-definition";
import { MarkerStore } from "../../../provider/ledger/kubernetes/marker-store";
import { claimName } from "../../../provider/ledger/kubernetes/claim-names";
import { entriesOverlap, entrySpan } from "../../../provider/ledger/held-entry";
import { nextFreeBlock, type ReadonlyAddressSet } from "../../../provider/allocator";
import { poolChooser, resolvePool, type RangeArgs } from "../../../provider/resources/pool/pool-spec";
import { poolDefinition } from "../../../provider/resources/pool/canonical-definition";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../../support/kube";
import { LedgerWorker } from "../../support/ledger-worker";

const admin = (): KubeClients => {
  process.env.KUBECONFIG = testKubeconfig();
  return kubeClients({ context: "admin@test" });
};
const urn = (stack: string, name: string) => `urn:pulumi:${stack}::p::egress-ipam:PrefixAllocation::${name}`;
const rule = { min: 24, max: 27 };
const errorOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as { code: string; message: string },
  );
const overlapping = (entries: string[]) =>
  entries.flatMap((a, i) =>
    entries.slice(i + 1).flatMap((b) => (entriesOverlap(entrySpan(a), entrySpan(b)) ? [[a, b]] : [])),
  );

describe("blocks in a shared pool", () => {
  let ns = "";
  beforeAll(async () => {
    ns = await freshNamespace("blocks");
  });
  afterAll(() => kube().core.deleteNamespace({ name: ns }));

  const config = (name: string) => ({
    name,
    namespace: ns,
    lockDuration: 10_000,
    lockAcquireTimeout: 60_000,
  });
  /** A range as written: a subnet alone (host-local's defaults), or the whole range. */
  const rangeOf = (range: string | RangeArgs): RangeArgs =>
    typeof range === "string" ? { subnet: range } : range;
  /** Stores the pool's definition (with its rule, when given) as its IpPool's `up` does. */
  const define = async (name: string, range: string | RangeArgs, prefixLengths?: object) => {
    const def = (p?: object) =>
      poolDefinition(resolvePool({ ranges: [rangeOf(range)], ...(p ? { prefixLengths: p } : {}) }).pool!);
    await new PoolDefinitions(config(name), admin()).agree({
      definition: def(prefixLengths),
      stack: "o/net/prod",
      owner: "urn:pool",
    });
  };
  const ledger = (stack: string, name: string): KubeLedger =>
    kubeLedger({ stack: `o/p/${stack}`, stackId: `id-${stack}`, clients: admin(), ledger: config(name) });
  const markers = (l: KubeLedger) => new MarkerStore(l.store).list();
  const blocks = (range: string | RangeArgs, prefixLength: number) => {
    const rangeSet = resolvePool({ ranges: [rangeOf(range)] }).pool!.rangeSets[0]!;
    return (taken: ReadonlyAddressSet, latest: readonly string[]) =>
      nextFreeBlock({ rangeSet, prefixLength, taken, cursor: latest.at(-1) });
  };

  it("two stacks in two processes ask for /26s and /27s of a range of one /24 at once: all succeed, no overlap, the range is full", async () => {
    const pool = uniqueName("fill");
    // Blocks come from the range only, never over the gateway: here 10.30.7.0/24, the gateway
    // (10.30.6.1) outside it.
    const range = { subnet: "10.30.6.0/23", rangeStart: "10.30.7.0", rangeEnd: "10.30.7.255" };
    await define(pool, range, rule);
    const [a, b] = await Promise.all([LedgerWorker.start(), LedgerWorker.start()]);
    try {
      const ask = { op: "blocks", namespace: ns, pool, range, lengths: [26, 27, 27] };
      const [ra, rb] = await Promise.all([
        a.send({ ...ask, stack: "o/p/a" }),
        b.send({ ...ask, stack: "o/p/b" }),
      ]);
      expect([ra.ok, ra.errors, rb.ok, rb.errors]).toEqual([true, [], true, []]);
      const all = [...(ra.blocks as string[]), ...(rb.blocks as string[])];
      expect(all).toHaveLength(6);
      expect(overlapping(all)).toEqual([]);
      const size = all.reduce((n, e) => n + Number(entrySpan(e).end - entrySpan(e).start + 1n), 0);
      expect(size).toBe(256); // no overlap and 256 addresses of the range: they fill it
      expect(all.every((e) => e.startsWith("10.30.7."))).toBe(true);
      const l = ledger("x", pool);
      const claims = await l.store.list();
      expect(claims.map((c) => [c.ip, c.state]).sort()).toEqual(all.map((e) => [e, "claim"]).sort());
      const full = await errorOf(l.plan({ pool: "p", owner: urn("x", "more"), choose: blocks(range, 27) }));
      expect(full?.code).toBe("POOL_EXHAUSTED");
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 300_000);

  it.each([
    ["10.30.1.0/24", "10.30.1.0/25"],
    ["10.30.1.0/24", "10.30.1.200"],
    ["10.30.1.64/26", "10.30.1.96/27"],
    ["10.30.1.0/25", "10.30.1.0/25"],
  ])(
    "%s and %s claimed by two stacks, with no plan and no Lease: never both, over 24 rounds",
    async (x, y) => {
      const pool = uniqueName("race");
      await define(pool, "10.30.0.0/16", rule);
      const [lx, ly] = [ledger("sx", pool), ledger("sy", pool)];
      const owners = { x: urn("sx", "x"), y: urn("sy", "y") };
      const claimX = () => lx.reserve("p", owners.x, { ips: [x], seq: 0 }, false, "ix");
      const claimY = () => ly.reserve("p", owners.y, { ips: [y], seq: 0 }, false, "iy");
      // Once `x`'s name exists (x's object, or the marker y registered in), start `then`.
      const once = async (then: () => Promise<void>) => {
        const name = claimName(pool, x);
        const exists = () =>
          kube()
            .core.readNamespacedConfigMap({ name, namespace: ns })
            .then(
              () => true,
              () => false,
            );
        while (!(await exists())) await new Promise((resolve) => setTimeout(resolve, 1));
        return then();
      };
      const wins = { x: 0, y: 0 };
      for (let round = 0; round < 24; round++) {
        // At once; y first (x starts once y wrote at x's name); x first (y starts once x's object is there).
        const order = round % 3;
        const [rx, ry] = await Promise.allSettled(
          order === 0
            ? [claimX(), claimY()]
            : order === 1
              ? [once(claimX), claimY()]
              : [claimX(), once(claimY)],
        );
        expect([rx.status, ry.status]).toContain("fulfilled");
        expect([rx.status, ry.status]).toContain("rejected"); // they overlap: one, never both
        if (order > 0) expect(rx.status).toBe(order === 1 ? "rejected" : "fulfilled"); // the first one
        const lost = (rx.status === "rejected" ? rx.reason : (ry as PromiseRejectedResult).reason) as {
          code: string;
          message: string;
        };
        expect(lost.code).toBe("IP_UNAVAILABLE");
        expect(lost.message).toContain(rx.status === "fulfilled" ? owners.x : owners.y); // names the holder
        const held = (await lx.store.list()).map((c) => c.ip);
        expect(held).toEqual([rx.status === "fulfilled" ? x : y]);
        wins[rx.status === "fulfilled" ? "x" : "y"]++;
        await Promise.all([
          lx.release("p", owners.x, undefined, "ix"),
          ly.release("p", owners.y, undefined, "iy"),
        ]);
        expect(await markers(lx)).toEqual([]);
      }
      expect(wins.x + wins.y).toBe(24);
      expect(Math.min(wins.x, wins.y)).toBeGreaterThanOrEqual(8); // each won its own rounds
    },
    300_000,
  );

  it("release then claim again; after every release no marker is left", async () => {
    const pool = uniqueName("gc");
    await define(pool, "10.30.0.0/16", rule);
    const l = ledger("a", pool);
    const entries = ["10.30.2.0/25", "10.30.2.128/26", "10.30.2.192/27", "10.30.2.230", "10.30.3.0/24"];
    for (const [i, e] of entries.entries()) await l.reserve("p", urn("a", `e${i}`), { ips: [e], seq: 0 });
    expect((await markers(l)).map((m) => m.block).sort()).toEqual([
      "10.30.2.0/24",
      "10.30.2.128/25",
      "10.30.2.192/26",
      "10.30.2.224/27",
    ]);
    // Claim listings (what report --ledger and refresh read) show the entries, never the markers.
    expect((await l.store.list()).map((c) => c.ip).sort()).toEqual([...entries].sort());
    expect([...(await l.holders("p")).keys()].sort()).toEqual([...entries].sort());
    for (const [i, e] of entries.entries()) await l.release("p", urn("a", `e${i}`), [e]);
    expect(await markers(l)).toEqual([]);
    expect(await l.store.list()).toEqual([]);
    await l.reserve("p", urn("a", "whole"), { ips: ["10.30.2.0/24"], seq: 0 }); // the /24 again, whole
    expect((await l.store.list()).map((c) => c.ip)).toEqual(["10.30.2.0/24"]);
  });

  it("an address inside a claimed block is refused naming the block's holder; planning goes around it", async () => {
    const pool = uniqueName("inside");
    // The range is 10.30.4.0/23 whole: its gateway is outside it.
    const range = {
      subnet: "10.30.4.0/22",
      rangeStart: "10.30.4.0",
      rangeEnd: "10.30.5.255",
      gateway: "10.30.7.254",
    };
    await define(pool, range, rule);
    const [a, b] = [ledger("a", pool), ledger("b", pool)];
    const block = await a.plan({ pool: "p", owner: urn("a", "net"), choose: blocks(range, 24) });
    await a.reserve("p", urn("a", "net"), block);
    expect(block.ips).toEqual(["10.30.4.0/24"]);
    const asked = await errorOf(
      b.plan({
        pool: "p",
        owner: urn("b", "web"),
        requested: ["10.30.4.9"],
        choose: poolChooser(resolvePool({ ranges: [range] }).pool!),
      }),
    );
    expect(asked?.code).toBe("IP_UNAVAILABLE");
    expect(asked?.message).toMatch(/10\.30\.4\.9 .* held by .*::net of stack o\/p\/a \(10\.30\.4\.0\/24\)/);
    // Claimed straight away (a view that has not seen the block): the marker refuses it.
    const claimed = await errorOf(b.reserve("p", urn("b", "web"), { ips: ["10.30.4.9"], seq: 0 }));
    expect(claimed?.code).toBe("IP_UNAVAILABLE");
    expect(claimed?.message).toMatch(
      /address 10\.30\.4\.9 .* overlaps block 10\.30\.4\.0\/24, held by .*::net of stack o\/p\/a/,
    );
    // Planned automatically, the address comes from outside the block.
    const auto = await b.plan({
      pool: "p",
      owner: urn("b", "auto"),
      choose: poolChooser(resolvePool({ ranges: [range] }).pool!),
    });
    expect(auto.ips[0]!.startsWith("10.30.5.")).toBe(true);
  });

  it("a pool without the rule refuses blocks, naming the pool and what to set", async () => {
    const pool = uniqueName("norule");
    await define(pool, "10.30.0.0/16");
    const refused = await errorOf(
      ledger("a", pool).reserve("p", urn("a", "net"), { ips: ["10.30.8.0/24"], seq: 0 }),
    );
    expect(refused?.code).toBe("PREFIX_NOT_ALLOWED");
    expect(refused?.message).toContain(`pool "${pool}" (namespace "${ns}")`);
    expect(refused?.message).toContain("prefixLengths: { min, max }");
  });

  it("a rule set on a pool with address claims registers them first: a block over one is refused, naming its holder", async () => {
    const pool = uniqueName("later");
    await define(pool, "10.30.0.0/16");
    const l = ledger("a", pool);
    for (const ip of ["10.30.9.5", "10.30.9.77", "10.30.9.200"])
      await l.reserve("p", urn("a", ip), { ips: [ip], seq: 0 });
    expect(await markers(l)).toEqual([]); // no rule: no marker, as before
    await define(pool, "10.30.0.0/16", rule); // the owner IpPool's update that sets the rule
    const stored = await new PoolDefinitions(config(pool), admin()).read();
    expect([stored?.markers, stored?.markersReady]).toEqual([rule, rule]);
    const b = ledger("b", pool);
    const over = await errorOf(b.reserve("p", urn("b", "net"), { ips: ["10.30.9.64/26"], seq: 0 }));
    expect(over?.message).toMatch(/overlaps address 10\.30\.9\.77, held by .*10\.30\.9\.77 of stack o\/p\/a/);
    await b.reserve("p", urn("b", "net"), { ips: ["10.30.9.128/27"], seq: 0 }); // nothing held inside
    expect((await l.store.list()).map((c) => c.ip).sort()).toEqual([
      "10.30.9.128/27",
      "10.30.9.200",
      "10.30.9.5",
      "10.30.9.77",
    ]);
  });
});
