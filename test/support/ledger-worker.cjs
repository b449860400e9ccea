/* global require, __dirname */
// A second (third, …) process for the shared-pool tests: it takes commands as JSON lines on stdin
// and answers each with one JSON line on stdout. It loads the package as users get it (the consumer
// project's installed copy) and reaches the test cluster through KUBECONFIG.
//
//   {"op":"lock", namespace, name, lockDuration, lockAcquireTimeout}  → {"ok":true,"identity":…}
//   {"op":"unlock"}                                                    → {"ok":true}
//   {"op":"plan", namespace, pool, subnet, stack, count}               → {"ok":true,"ips":[…]}
//   {"op":"bench", namespace, pool, subnet, stack, count, concurrency, reserve?}
//                                      → {"ok":true,"latencies":[ms…],"ips":[…],"wallMs":…,"writes":{…}}
//                                      (plan and reserve per allocation; plan only with reserve: false;
//                                      writes: the API writes it made, counting-clients.ts)
//   {"op":"cycle", namespace, pool, subnet, stack, count, concurrency, window}
//                                      → {"ok":true,"held":[…],"wallMs":…,"writes":{…}}
//                                      (count allocations, each released once `window` newer ones are held)
//   {"op":"churn", namespace, pool, subnet, stack, count, attempts, signalAt} → {"ok":true,"ips":[…],"errors":{code:n}}
//                                      (prints {"progress":signalAt} on the way)
//   {"op":"blocks", namespace, pool, subnet | range, stack, lengths, reserve?} → {"ok":true,"blocks":[…],"errors":[…]}
//                                      (a block per length, planned and claimed at once, each by its own owner;
//                                      `range` is a whole range, {subnet, rangeStart, rangeEnd, gateway})
//   {"op":"read", namespace, pool}                                     → {"ok":true,"claims":[…]}
//   {"op":"write", ip, stack, owner}   (after read: create the claim of ip, and overwrite every claim
//                                       read with the resourceVersion read) → {"ok":true,"created":…,"replaced":[codes]}
// Errors answer {"ok":false,"code":…,"message":…}.
const path = require("node:path");
const readline = require("node:readline");

const dist =
  process.env.EGRESS_IPAM_DIST ??
  path.join(process.env.EGRESS_IPAM_CONSUMER, "node_modules", "pulumi-egress-ipam", "dist");
const load = (m) => require(path.join(dist, m));
const { leaseLocker, processIdentity } = load("ledger/kubernetes/lease-lock.js");
const { kubeLedger } = load("ledger/kubernetes/kube-ledger.js");
const { ClaimStore } = load("ledger/kubernetes/claim-store.js");
const { kubeClients } = load("kube/kube-config.js");
const { poolChooser, resolvePool } = load("resources/pool/pool-spec.js");
const { nextFreeBlock } = load("allocator/index.js");
const { countingClients } = require(path.join(__dirname, "counting-clients.ts"));

const clients = kubeClients({ context: process.env.KUBE_CONTEXT || undefined });
let locker;
let store;
let seen = [];

const ops = {
  async lock(c) {
    const config = {
      id: c.name,
      namespace: c.namespace,
      lockDuration: c.lockDuration,
      lockAcquireTimeout: c.lockAcquireTimeout,
    };
    locker ??= leaseLocker({ clients, config });
    await locker.acquire();
    return { identity: processIdentity() };
  },
  async unlock() {
    await locker.release();
    return {};
  },
  async plan(c) {
    const { pool } = resolvePool({ ranges: [{ subnet: c.subnet }] });
    const ledger = kubeLedger({
      stack: c.stack,
      ledger: { name: c.pool, namespace: c.namespace, lockDuration: 10_000, lockAcquireTimeout: 120_000 },
    });
    const choose = poolChooser(pool);
    const owners = Array.from(
      { length: c.count },
      (_, i) => `urn:pulumi:w::p::egress-ipam:IpAllocation::a${i}`,
    );
    const plans = await Promise.all(
      owners.map((owner) => ledger.plan({ pool: "p", owner, choose, count: 1 })),
    );
    return { ips: plans.map((p) => p.ips[0]) };
  },
  // Allocations as a deployment makes them (plan at check, claim at create), `concurrency` at a time;
  // the latency of each and the wall time of all.
  async bench(c) {
    const { pool } = resolvePool({ ranges: [{ subnet: c.subnet }] });
    const counting = countingClients(clients);
    const ledger = kubeLedger({
      stack: c.stack,
      clients: counting.clients,
      ledger: { name: c.pool, namespace: c.namespace, lockDuration: 10_000, lockAcquireTimeout: 120_000 },
    });
    const choose = poolChooser(pool);
    const latencies = [];
    let next = 0;
    const started = performance.now();
    const lane = async () => {
      while (next < c.count) {
        const owner = `urn:pulumi:b::p::egress-ipam:IpAllocation::a${next++}`;
        const t0 = performance.now();
        const plan = await ledger.plan({ pool: "p", owner, choose, count: 1 });
        if (c.reserve !== false) await ledger.reserve("p", owner, plan);
        latencies.push(performance.now() - t0);
        ips.push(plan.ips[0]);
      }
    };
    const ips = [];
    await Promise.all(Array.from({ length: c.concurrency }, lane));
    return { latencies, ips, wallMs: performance.now() - started, writes: counting.counts };
  },
  // Allocations (plan, then reserve) `concurrency` at a time, each released once `window` newer
  // ones are held: a pool's churn over time. What is held at the end, and the writes of it all.
  async cycle(c) {
    const { pool } = resolvePool({ ranges: [{ subnet: c.subnet }] });
    const counting = countingClients(clients);
    const ledger = kubeLedger({
      stack: c.stack,
      clients: counting.clients,
      ledger: { name: c.pool, namespace: c.namespace, lockDuration: 10_000, lockAcquireTimeout: 120_000 },
    });
    const choose = poolChooser(pool);
    const held = [];
    let next = 0;
    const started = performance.now();
    const lane = async () => {
      while (next < c.count) {
        const owner = `urn:pulumi:b::p::egress-ipam:IpAllocation::c${next++}`;
        const plan = await ledger.plan({ pool: "p", owner, choose, count: 1 });
        await ledger.reserve("p", owner, plan);
        held.push({ owner, ip: plan.ips[0] });
        if (held.length > c.window) {
          const old = held.shift();
          await ledger.release("p", old.owner, [old.ip]);
        }
      }
    };
    await Promise.all(Array.from({ length: c.concurrency }, lane));
    return { held: held.map((h) => h.ip), wallMs: performance.now() - started, writes: counting.counts };
  },
  // Allocations one after another that survive API-server outages: a failed allocation is tried
  // again with the same owner (as the next `up` would), up to `attempts` times.
  async churn(c) {
    const { pool } = resolvePool({ ranges: [{ subnet: c.subnet }] });
    const ledger = kubeLedger({
      stack: c.stack,
      ledger: { name: c.pool, namespace: c.namespace, lockDuration: 3_000, lockAcquireTimeout: 20_000 },
    });
    const choose = poolChooser(pool);
    const ips = [];
    const errors = {};
    for (let i = 0; i < c.count; i++) {
      const owner = `urn:pulumi:r::p::egress-ipam:IpAllocation::a${i}`;
      for (let attempt = 1; ; attempt++) {
        try {
          const plan = await ledger.plan({ pool: "p", owner, choose, count: 1 });
          await ledger.reserve("p", owner, plan);
          ips.push(plan.ips[0]);
          break;
        } catch (e) {
          errors[e.code ?? "other"] = (errors[e.code ?? "other"] ?? 0) + 1;
          if (attempt >= c.attempts) throw e;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
      if (i === c.signalAt) process.stdout.write(JSON.stringify({ progress: i }) + "\n");
    }
    return { ips, errors };
  },
  // Blocks of a shared pool whose stored rule allows them, as PrefixAllocations make them: one owner
  // per length, all planned (under the Lease) and claimed (without it) at once.
  async blocks(c) {
    const { pool } = resolvePool({ ranges: [c.range ?? { subnet: c.subnet }] });
    const ledger = kubeLedger({
      stack: c.stack,
      stackId: `id-${c.stack}`,
      ledger: { name: c.pool, namespace: c.namespace, lockDuration: 10_000, lockAcquireTimeout: 120_000 },
    });
    const chooser = (prefixLength) => (taken, latest) =>
      nextFreeBlock({ rangeSet: pool.rangeSets[0], prefixLength, taken, cursor: latest.at(-1) });
    const results = await Promise.allSettled(
      c.lengths.map(async (length, i) => {
        const owner = `urn:pulumi:${c.stack.split("/")[2]}::p::egress-ipam:PrefixAllocation::b${i}`;
        const plan = await ledger.plan({ pool: "p", owner, choose: chooser(length), count: 1 });
        if (c.reserve !== false) await ledger.reserve("p", owner, plan, false, `i-${i}`);
        return plan.ips[0];
      }),
    );
    return {
      blocks: results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : [])),
      errors: results.flatMap((r) =>
        r.status === "rejected" ? [`${r.reason.code}: ${r.reason.message}`] : [],
      ),
    };
  },
  async read(c) {
    store = new ClaimStore(clients, c.namespace, c.pool);
    seen = await store.list();
    return { claims: seen.map((x) => ({ ip: x.ip, owner: x.owner, resourceVersion: x.resourceVersion })) };
  },
  async write(c) {
    const fields = { state: "claim", stack: c.stack, owner: c.owner, seq: 1, expires: 0 };
    const created = Boolean(await store.create(c.ip, fields));
    const replaced = [];
    for (const x of seen) {
      replaced.push(
        await store.replace(x, fields).then(
          () => 0,
          (e) => e.code ?? -1,
        ),
      );
    }
    return { created, replaced };
  },
};

readline.createInterface({ input: process.stdin }).on("line", async (line) => {
  const c = JSON.parse(line);
  try {
    const result = await ops[c.op](c);
    process.stdout.write(JSON.stringify({ ok: true, ...result }) + "\n");
  } catch (e) {
    process.stdout.write(JSON.stringify({ ok: false, code: e.code, message: e.message }) + "\n");
  }
});
process.stdout.write(JSON.stringify({ ok: true, ready: true, pid: process.pid }) + "\n");
