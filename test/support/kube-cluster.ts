// Starts and stops the test cluster (scripts/kube-test-cluster.sh) for a test run. Shared by the
// vitest global setup and the benchmarks (erasable TypeScript, no relative imports, so .mjs
// benchmarks can load it with Node's type stripping).
import { spawnSync } from "node:child_process";
import * as path from "node:path";

// Run from the repository root, as vitest and the benchmarks are.
const script = path.join(process.cwd(), "scripts", "kube-test-cluster.sh");

/**
 * Starts the cluster unless one is running. Returns its kubeconfig path and whether this call
 * started it (only the starter stops it).
 */
export function startKubeCluster(): { kubeconfig: string; started: boolean } {
  const r = spawnSync("bash", [script, "start"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (r.status !== 0) {
    throw new Error(`scripts/kube-test-cluster.sh start failed (exit ${r.status}):\n${r.stderr}`);
  }
  const lines = r.stdout.trim().split("\n");
  return { kubeconfig: lines[lines.length - 1] ?? "", started: !/already running/.test(r.stderr) };
}

/** Stops the cluster and removes its data. */
export function stopKubeCluster(): void {
  const r = spawnSync("bash", [script, "stop"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (r.status !== 0) throw new Error(`scripts/kube-test-cluster.sh stop failed:\n${r.stderr}`);
}
