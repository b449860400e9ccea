// One stack at scale: N holders of one pool (default 5,000 IpAllocations) beside the same-shape
// no-op (one Echo as the pool and N NoopAllocations), each on a fresh stack and file backend, through
// the five operations a stack lives by: up, a no-op up, preview, refresh, destroy (`--parallel 16`).
// Prints each operation's wall time for both kinds and their ratio, the peak RSS of the
// dynamic-provider process over all five, and the peak RSS of the process that runs the program (an
// inline Automation API program, in a child process of its own). Fails when either peak is 1 GB or
// more, or when an operation leaves the stack other than expected (the no-op up and the preview
// must change nothing). Figures of one run: at this size a run takes minutes.
//
// The file backend rewrites the whole checkpoint after every step, which is quadratic in the
// resources (hours at 5,000, for both kinds alike); the bench sets PULUMI_SKIP_CHECKPOINTS=true,
// Pulumi's setting for large stacks (state is written once, at the end of each operation), unless
// BENCH_SCALE_CHECKPOINTS=1. Size: BENCH_SCALE_N (default 5000).
// Needs dist/ (npm run bench builds it) and the Pulumi CLI (scripts/setup.sh).
import { spawn } from "node:child_process";
import console from "node:console";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { clearInterval, setInterval } from "node:timers";
import { prepareConsumerProject } from "../scripts/consumer.mjs";

process.removeAllListeners("warning");
const n = Number(process.env.BENCH_SCALE_N ?? 5000);
const parallel = 16;
const limitMb = 1024;
const operations = ["up", "no-op up", "preview", "refresh", "destroy"];

/** In a child: runs the five operations on a fresh stack of `kind` and prints the times as JSON. */
async function runKind(consumerDir, workDir, kind) {
  const require = createRequire(path.join(consumerDir, "package.json"));
  const { LocalWorkspace } = require("@pulumi/pulumi/automation");
  const { IpPool, IpAllocation } = require("pulumi-egress-ipam");
  const { Echo, NoopAllocation } = require("pulumi-egress-ipam/testing");
  const program = async () => {
    if (kind === "alloc") {
      const pool = new IpPool("pool", { ranges: [{ subnet: "10.64.0.0/16" }] });
      for (let i = 0; i < n; i++) new IpAllocation(`alloc-${i}`, { pool });
    } else {
      const pool = new Echo("pool", { value: "0" });
      for (let i = 0; i < n; i++) new NoopAllocation(`alloc-${i}`, { pool, seq: i + 1 });
    }
  };
  fs.mkdirSync(path.join(workDir, "backend"));
  const envVars = {
    PULUMI_HOME: path.join(workDir, ".pulumi-home"),
    PULUMI_BACKEND_URL: `file://${path.join(workDir, "backend")}`,
    PULUMI_CONFIG_PASSPHRASE: "bench",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    ...(process.env.BENCH_SCALE_CHECKPOINTS === "1" ? {} : { PULUMI_SKIP_CHECKPOINTS: "true" }),
  };
  const projectName = `scale-${kind}`;
  const stack = await LocalWorkspace.createOrSelectStack(
    { stackName: "bench", projectName, program },
    { workDir, envVars, projectSettings: { name: projectName, runtime: "nodejs", main: workDir } },
  );
  const times = {};
  const changes = {};
  const timed = async (name, op) => {
    const started = performance.now();
    const result = await op();
    times[name] = performance.now() - started;
    const summary = result.summary?.resourceChanges ?? result.changeSummary ?? {};
    changes[name] = Object.fromEntries(Object.entries(summary).filter(([k]) => k !== "same"));
  };
  await timed("up", () => stack.up({ parallel }));
  await timed("no-op up", () => stack.up({ parallel }));
  await timed("preview", () => stack.preview({ parallel }));
  await timed("refresh", () => stack.refresh({ parallel }));
  await timed("destroy", () => stack.destroy({ parallel }));
  const rss = Number(/^VmHWM:\s+(\d+)/m.exec(fs.readFileSync("/proc/self/status", "utf8"))[1]) / 1024;
  console.log(JSON.stringify({ times, changes, programRss: rss }));
}

if (process.argv[2] === "--kind") {
  await runKind(process.argv[3], process.argv[4], process.argv[5]);
  process.exit(0);
}

const { providerProcessesIn } = await import("../test/support/provider-processes.ts");
const consumerDir = prepareConsumerProject();

/** Runs one kind in a child process, sampling the peak RSS of its provider processes every 250 ms. */
async function measureKind(kind) {
  const runsDir = path.join(consumerDir, "runs");
  fs.mkdirSync(runsDir, { recursive: true });
  const workDir = fs.mkdtempSync(path.join(runsDir, `scale-${kind}-`));
  let providerRss = 0;
  const timer = setInterval(() => {
    for (const pid of providerProcessesIn(workDir)) {
      const status = (() => {
        try {
          return fs.readFileSync(`/proc/${pid}/status`, "utf8");
        } catch {
          return "";
        }
      })();
      providerRss = Math.max(providerRss, Number(/^VmHWM:\s+(\d+)/m.exec(status)?.[1] ?? 0) / 1024);
    }
  }, 250);
  const child = spawn(process.execPath, [import.meta.filename, "--kind", consumerDir, workDir, kind], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  const code = await new Promise((resolve) => child.on("exit", resolve));
  clearInterval(timer);
  fs.rmSync(workDir, { recursive: true, force: true });
  if (code !== 0) throw new Error(`the ${kind} stack failed (exit ${code})`);
  return { ...JSON.parse(out.trim().split("\n").at(-1)), providerRss };
}

const results = { alloc: await measureKind("alloc"), noop: await measureKind("noop") };
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
console.log(`one stack, ${n} holders of one pool (IpAllocation) against one Echo and ${n} NoopAllocations:`);
for (const op of operations) {
  const [a, b] = [results.alloc.times[op], results.noop.times[op]];
  console.log(
    `  ${op.padEnd(9)} ${seconds(a).padStart(8)} against ${seconds(b).padStart(8)}: ${(a / b).toFixed(2)}×`,
  );
}
const problems = [];
for (const [kind, r] of Object.entries(results)) {
  console.log(
    `  ${kind === "alloc" ? "IpAllocation" : "NoopAllocation"}: peak RSS of the dynamic-provider process ` +
      `${r.providerRss.toFixed(0)} MB, of the program's process ${r.programRss.toFixed(0)} MB`,
  );
  if (r.providerRss >= limitMb) problems.push(`${kind}: provider ${r.providerRss.toFixed(0)} MB`);
  if (r.programRss >= limitMb) problems.push(`${kind}: program ${r.programRss.toFixed(0)} MB`);
  if (r.providerRss === 0) problems.push(`${kind}: no provider process was seen`);
  const created = r.changes.up?.create ?? 0;
  if (created !== n + 2)
    problems.push(`${kind}: up created ${created} of ${n + 2} (the stack, the pool, the holders)`);
  for (const op of ["no-op up", "preview"]) {
    if (Object.keys(r.changes[op]).length > 0)
      problems.push(`${kind}: ${op} changed ${JSON.stringify(r.changes[op])}`);
  }
}
console.log(problems.length === 0 ? "  ok (each peak < 1 GB)" : `  OVER: ${problems.join("; ")}`);
process.exit(problems.length === 0 ? 0 : 1);
