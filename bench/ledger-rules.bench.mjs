// What a quota and a prefix rule cost a shared pool, over the real kube-apiserver of the test cluster.
// 1. Allocations/s (plan with a hold, then claim, as a deployment's check and create do) of a pool
//    with a quota ({ default: 100000 }) and the rule { min: 24, max: 27 }, against the same pool
//    without them: two processes × BENCH_RULES_ALLOCATIONS (default 250) each, 8 in flight per
//    process, the two kinds alternating, three runs (BENCH_RULES_RUNS), medians. Every API write is
//    counted on its way to the server (test/support/counting-clients.ts): writes per allocation of
//    each kind. Every allocation must have exactly one claim (no duplicate).
// 2. Churn: BENCH_RULES_CHURN (default 20,000) allocations and releases of the pool with the quota
//    and the rule, two processes, each allocation released once 500 newer ones of its process are
//    held; then the largest object of the pool (the markers and the counter grow with what is
//    held, and would grow for good with what releases leave behind) against the limit.
// Fails when the pool with the quota and the rule allocates under 50 % of the plain pool's rate, or
// its largest object is over the ConfigMap limit.
// Needs dist/ (npm run bench builds it) and the cluster's servers (scripts/setup-kube.sh).
import console from "node:console";
import { createRequire } from "node:module";
import * as path from "node:path";
import process from "node:process";

process.removeAllListeners("warning");
const { startKubeCluster, stopKubeCluster } = await import("../test/support/kube-cluster.ts");
const { LedgerWorker } = await import("../test/support/ledger-worker.ts");
const { uniqueName } = await import("../test/support/kube.ts");

const processes = 2;
const perProcess = Number(process.env.BENCH_RULES_ALLOCATIONS ?? 250);
const inFlight = 8;
const runs = Number(process.env.BENCH_RULES_RUNS ?? 3);
const churn = Number(process.env.BENCH_RULES_CHURN ?? 20_000);
const window = 500;
const cluster = startKubeCluster();
process.env.EGRESS_IPAM_KUBECONFIG = cluster.kubeconfig;
process.env.KUBECONFIG = cluster.kubeconfig;
process.env.EGRESS_IPAM_DIST ??= path.join(process.cwd(), "dist"); // another build: set it
const dist = createRequire(path.join(process.env.EGRESS_IPAM_DIST, "index.js"));
const { ClaimStore } = dist("./ledger/kubernetes/claim-store.js");
const { PoolDefinitions } = dist("./ledger/kubernetes/pool-definition.js");
const { objectSizes, objectLimit } = dist("./ledger/kubernetes/object-sizes.js");
const { canonicalQuotas } = dist("./ledger/quota-rules.js");
const { resolvePool } = dist("./resources/pool/pool-spec.js");
const { poolDefinition } = dist("./resources/pool/canonical-definition.js");
const { kubeClients } = dist("./kube/kube-config.js");

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const namespace = uniqueName("bench-rules");
const clients = kubeClients("admin@test");
const subnet = "10.66.0.0/20";
const rule = { min: 24, max: 27 };

/** Stores pool `name`'s definition, with the quota and the rule when `ruled`, as its owner's `up` does. */
async function define(name, ruled) {
  const config = { name, namespace, lockDuration: 10_000, lockAcquireTimeout: 120_000 };
  const pool = resolvePool({ ranges: [{ subnet }], ...(ruled ? { prefixLengths: rule } : {}) }).pool;
  await new PoolDefinitions(config, clients).agree({
    definition: poolDefinition(pool),
    stack: "o/net/prod",
    owner: "urn:pool",
    ...(ruled ? { quotas: canonicalQuotas({ default: 100_000 }) } : {}),
  });
}

const sum = (results, key) => results.reduce((n, r) => n + r.writes[key], 0);

await clients.core.createNamespace({ body: { metadata: { name: namespace } } });
const workers = [];
let failed = false;
try {
  for (let i = 0; i < processes; i++) workers.push(await LedgerWorker.start());
  // Warm up (connections, the first list of a pool).
  const warm = uniqueName("warm");
  await define(warm, true);
  await workers[0].send({
    op: "bench",
    namespace,
    pool: warm,
    subnet,
    stack: "o/p/warm",
    count: 20,
    concurrency: 1,
  });

  // 1. Allocations/s and writes per allocation, plain against quota + rule.
  const kinds = {
    plain: { rates: [], writes: [], leases: [] },
    ruled: { rates: [], writes: [], leases: [] },
  };
  for (let run = 0; run < runs; run++) {
    const order = run % 2 === 0 ? ["plain", "ruled"] : ["ruled", "plain"];
    for (const kind of order) {
      const pool = uniqueName(kind);
      await define(pool, kind === "ruled");
      const started = performance.now();
      const results = await Promise.all(
        workers.map((w, i) =>
          w.send({
            op: "bench",
            namespace,
            pool,
            subnet,
            stack: `o/p/s${i}`,
            count: perProcess,
            concurrency: inFlight,
          }),
        ),
      );
      const wall = performance.now() - started;
      for (const r of results) if (!r.ok) throw new Error(`worker failed: ${r.code} ${r.message}`);
      const total = processes * perProcess;
      const ips = results.flatMap((r) => r.ips);
      const claims = await new ClaimStore(clients, namespace, pool).list();
      if (new Set(ips).size !== total || claims.filter((c) => c.state === "claim").length !== total) {
        failed = true;
        console.log(
          `  ${kind} run ${run + 1}: DUPLICATE or missing claims (${new Set(ips).size} distinct, ${claims.length} objects)`,
        );
      }
      kinds[kind].rates.push(total / (wall / 1000));
      kinds[kind].writes.push(sum(results, "configMaps") / total);
      kinds[kind].leases.push(sum(results, "leases") / total);
    }
  }
  const line = (kind, label) => {
    const k = kinds[kind];
    return (
      `${label}: ${k.rates.map((r) => r.toFixed(0)).join(" / ")} allocations/s, median ${median(k.rates).toFixed(0)}; ` +
      `${median(k.writes).toFixed(2)} ConfigMap writes and ${median(k.leases).toFixed(2)} Lease writes per allocation`
    );
  };
  console.log(
    `${processes} processes × ${perProcess} allocations (${inFlight} in flight each), plan then claim:`,
  );
  console.log(`  ${line("plain", "plain pool")}`);
  console.log(`  ${line("ruled", "quota { default: 100000 } and prefixLengths { min: 24, max: 27 }")}`);
  const ratio = median(kinds.ruled.rates) / median(kinds.plain.rates);
  const rateOk = ratio >= 0.5;
  failed ||= !rateOk;
  console.log(
    `  with quota and rule: ${(100 * ratio).toFixed(0)} % of the plain pool's rate (target ≥ 50 %) ${rateOk ? "ok" : "UNDER"}`,
  );

  // 2. Churn, then the largest object.
  const pool = uniqueName("churn");
  await define(pool, true);
  const started = performance.now();
  const results = await Promise.all(
    workers.map((w, i) =>
      w.send({
        op: "cycle",
        namespace,
        pool,
        subnet,
        stack: `o/p/c${i}`,
        count: Math.ceil(churn / processes),
        concurrency: inFlight,
        window,
      }),
    ),
  );
  const wall = (performance.now() - started) / 1000;
  for (const r of results) if (!r.ok) throw new Error(`worker failed: ${r.code} ${r.message}`);
  const sizes = await objectSizes(clients, namespace, pool);
  const largest = sizes[0];
  const limit = objectLimit();
  const byRole = Object.entries(sizes.reduce((m, o) => ({ ...m, [o.role]: (m[o.role] ?? 0) + 1 }), {})).map(
    ([role, n]) => `${n} ${role}`,
  );
  const sizeOk = largest.bytes <= limit;
  failed ||= !sizeOk;
  const allocations = processes * Math.ceil(churn / processes);
  console.log(
    `churn: ${allocations} allocations and ${allocations - processes * window} releases in ${wall.toFixed(0)} s ` +
      `(${(allocations / wall).toFixed(0)} allocations/s, ${(sum(results, "configMaps") / allocations).toFixed(2)} ` +
      `ConfigMap writes per allocation and release), ${processes * window} held at the end; the pool's objects: ` +
      `${byRole.join(", ")}; the largest, ${largest.role} ${largest.name}: ${largest.bytes} bytes, ${largest.keys} keys ` +
      `(${((100 * largest.bytes) / limit).toFixed(1)} % of the ${limit}-byte limit) ${sizeOk ? "ok" : "OVER"}`,
  );
} finally {
  await Promise.all(workers.map((w) => w.stop()));
  await clients.core.deleteNamespace({ name: namespace });
  if (cluster.started) stopKubeCluster();
}
process.exit(failed ? 1 : 0);
