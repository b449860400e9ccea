// Shared-pool benchmark over the real kube-apiserver of the test cluster: two processes allocating
// from one pool at once (plan with a hold at check, then claim at create, as a deployment does),
// each with 4 allocations in flight. Prints allocations per second of both together, and the
// p50 / p99 latency of one allocation, contended and alone. Figures only: no target to miss.
// Needs dist/ (npm run bench builds it) and the cluster's servers (scripts/setup-kube.sh).
import console from "node:console";
import * as path from "node:path";
import process from "node:process";

process.removeAllListeners("warning");
const { startKubeCluster, stopKubeCluster } = await import("../test/support/kube-cluster.ts");
const { LedgerWorker } = await import("../test/support/ledger-worker.ts");
const { kube, uniqueName } = await import("../test/support/kube.ts");

const perProcess = 300;
const concurrency = 4;
const cluster = startKubeCluster();
process.env.EGRESS_IPAM_KUBECONFIG = cluster.kubeconfig;
process.env.EGRESS_IPAM_DIST = path.join(process.cwd(), "dist");

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const ms = (x) => `${x.toFixed(1)} ms`;

const namespace = uniqueName("bench");
await kube().core.createNamespace({ body: { metadata: { name: namespace } } });
const workers = await Promise.all([LedgerWorker.start(), LedgerWorker.start()]);
try {
  const run = (w, stack, pool, count, lanes) =>
    w.send({ op: "bench", namespace, pool, subnet: "10.64.0.0/20", stack, count, concurrency: lanes });

  // Warm-up (client load, TLS, the Lease's first creation), not counted.
  await run(workers[0], "o/p/warm", uniqueName("warm"), 20, 1);

  const alone = await run(workers[0], "o/p/alone", uniqueName("alone"), 200, 1);
  const pool = uniqueName("shared");
  const started = performance.now();
  const [a, b] = await Promise.all([
    run(workers[0], "o/p/a", pool, perProcess, concurrency),
    run(workers[1], "o/p/b", pool, perProcess, concurrency),
  ]);
  const wall = performance.now() - started;
  for (const r of [alone, a, b]) if (!r.ok) throw new Error(`worker failed: ${r.code} ${r.message}`);
  const both = [...a.latencies, ...b.latencies];
  console.log(
    `two processes × ${perProcess} allocations (${concurrency} in flight each), one pool: ` +
      `${((2 * perProcess) / (wall / 1000)).toFixed(1)} allocations/s`,
  );
  console.log(`  one allocation, contended: p50 ${ms(quantile(both, 0.5))}, p99 ${ms(quantile(both, 0.99))}`);
  console.log(
    `  one allocation, alone (one at a time): p50 ${ms(quantile(alone.latencies, 0.5))}, ` +
      `p99 ${ms(quantile(alone.latencies, 0.99))}, ${(200 / (alone.wallMs / 1000)).toFixed(1)} allocations/s`,
  );
} finally {
  await Promise.all(workers.map((w) => w.stop()));
  await kube().core.deleteNamespace({ name: namespace });
  if (cluster.started) stopKubeCluster();
}
