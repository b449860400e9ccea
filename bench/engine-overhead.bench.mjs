// Engine overhead of IpAllocation: `pulumi up --parallel 16` of one IpPool and N IpAllocations
// against one Echo and N NoopAllocations (testing/: they keep what an allocation keeps, in the same
// properties, and plan nothing: the engine's floor for a resource that shows what an allocation
// shows), each on a fresh stack and file backend, alternating which goes first. Prints the medians
// and their ratio per size and fails when a ratio exceeds 1.10. Also prints the
// checkpoint bytes per resource of each kind, the heap allocations one checkpoint write of the
// engine makes per resource (toolchain/pulumi-cli/checkpoint-cost: the same code, and unlike wall
// time the same count on every run), the peak RSS of the dynamic-provider process during the
// IpAllocation up, and the preview of the largest size.
// Sizes and runs: BENCH_ENGINE_SIZES (default "100,1000"), BENCH_ENGINE_RUNS (default 3).
// Needs dist/ (npm run bench builds it) and the Pulumi CLI (scripts/setup.sh).
import { execFileSync } from "node:child_process";
import console from "node:console";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { clearInterval, setInterval } from "node:timers";
import { prepareConsumerProject } from "../scripts/consumer.mjs";

// The helper is TypeScript that Node loads by stripping types; silence its note that the package
// does not declare a module type.
process.removeAllListeners("warning");
const { providerProcessesIn } = await import("../test/support/provider-processes.ts");

const sizes = (process.env.BENCH_ENGINE_SIZES ?? "100,1000").split(",").map(Number);
const runs = Number(process.env.BENCH_ENGINE_RUNS ?? 3);
const target = 1.1;
const parallel = 16;

/** The checkpoint-cost tool, built once per Pulumi version next to the CLI's build. */
function checkpointCostTool() {
  const root = path.resolve(import.meta.dirname, "..");
  const version = JSON.parse(
    fs.readFileSync(path.join(root, "node_modules/@pulumi/pulumi/package.json"), "utf8"),
  ).version;
  const tool = path.join(root, ".tools", `checkpoint-cost-v${version}`, "checkpoint-cost");
  if (!fs.existsSync(tool)) {
    execFileSync("go", ["build", "-trimpath", "-o", tool, "./checkpoint-cost"], {
      cwd: path.join(root, "toolchain", "pulumi-cli"),
      stdio: "inherit",
    });
  }
  return tool;
}
const costTool = checkpointCostTool();
/** Heap allocations per resource of one engine checkpoint write of `checkpoint`. */
const mallocsOf = (checkpoint) =>
  Math.round(JSON.parse(execFileSync(costTool, [checkpoint], { encoding: "utf8" }))[0].mallocsPerResource);

const consumerDir = prepareConsumerProject();
const consumerRequire = createRequire(path.join(consumerDir, "package.json"));
const { LocalWorkspace } = consumerRequire("@pulumi/pulumi/automation");
const { IpPool, IpAllocation } = consumerRequire("pulumi-egress-ipam");
const { Echo, NoopAllocation } = consumerRequire("pulumi-egress-ipam/testing");

const programs = {
  noop: (n) => async () => {
    const pool = new Echo("pool", { value: "0" });
    for (let i = 0; i < n; i++) new NoopAllocation(`alloc-${i}`, { pool, seq: i + 1 });
  },
  alloc: (n) => async () => {
    const pool = new IpPool("pool", { ranges: [{ subnet: "10.64.0.0/16" }] });
    for (let i = 0; i < n; i++) new IpAllocation(`alloc-${i}`, { pool });
  },
};

/**
 * The peak RSS (MB, the kernel's VmHWM) of the stack's dynamic-provider processes (found by their
 * working directory, `workDir`) while `during` runs, polled every 250 ms. A scan takes about 1 ms of
 * this process's event loop, on which the inline program runs.
 */
async function peakProviderRss(workDir, during) {
  let peak = 0;
  const sample = async () => {
    for (const pid of providerProcessesIn(workDir)) {
      const status = await fs.promises.readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
      peak = Math.max(peak, Number(/^VmHWM:\s+(\d+)/m.exec(status)?.[1] ?? 0) / 1024);
    }
  };
  const timer = setInterval(() => void sample(), 250);
  try {
    await during();
  } finally {
    clearInterval(timer);
  }
  return peak;
}

/** A fresh stack of `kind` with `n` resources in its own directory and file backend. */
async function freshStack(kind, n) {
  const runsDir = path.join(consumerDir, "runs");
  fs.mkdirSync(runsDir, { recursive: true });
  const workDir = fs.mkdtempSync(path.join(runsDir, `bench-${kind}-`));
  fs.mkdirSync(path.join(workDir, "backend"));
  const envVars = {
    PULUMI_HOME: path.join(workDir, ".pulumi-home"),
    PULUMI_BACKEND_URL: `file://${path.join(workDir, "backend")}`,
    PULUMI_CONFIG_PASSPHRASE: "bench",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
  };
  const projectName = `bench-${kind}`;
  const stack = await LocalWorkspace.createOrSelectStack(
    { stackName: "bench", projectName, program: programs[kind](n) },
    { workDir, envVars, projectSettings: { name: projectName, runtime: "nodejs", main: workDir } },
  );
  const checkpoint = path.join(workDir, "backend", ".pulumi", "stacks", projectName, "bench.json");
  return { stack, workDir, checkpoint };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** Bytes of one resource of `type` in the checkpoint (JSON as the file backend writes it). */
function bytesOf(checkpoint, type) {
  const resources = JSON.parse(fs.readFileSync(checkpoint, "utf8")).checkpoint.latest.resources;
  const of = resources.filter((r) => r.type.endsWith(`egress-ipam:${type}`));
  return Math.round(of.reduce((sum, r) => sum + JSON.stringify(r).length, 0) / of.length);
}

let failed = false;
for (const n of sizes) {
  const times = { noop: [], alloc: [] };
  let bytes = {};
  let mallocs = {};
  let rss = 0;
  for (let run = 0; run < runs; run++) {
    const order = run % 2 === 0 ? ["noop", "alloc"] : ["alloc", "noop"];
    for (const kind of order) {
      const { stack, workDir, checkpoint } = await freshStack(kind, n);
      const started = performance.now();
      const up = () => stack.up({ parallel });
      if (kind === "alloc") rss = Math.max(rss, await peakProviderRss(workDir, up));
      else await up();
      times[kind].push(performance.now() - started);
      if (run === 0) {
        bytes[kind] = bytesOf(checkpoint, kind === "noop" ? "NoopAllocation" : "IpAllocation");
        mallocs[kind] = mallocsOf(checkpoint);
      }
      await stack.destroy({ parallel });
      fs.rmSync(workDir, { recursive: true, force: true });
    }
  }
  const ratio = median(times.alloc) / median(times.noop);
  const ok = ratio <= target;
  failed ||= !ok;
  console.log(
    `N = ${n}: up of ${n} IpAllocations ${times.alloc.map(seconds).join(" / ")} (median ${seconds(median(times.alloc))}), ` +
      `${n} NoopAllocations ${times.noop.map(seconds).join(" / ")} (median ${seconds(median(times.noop))}): ` +
      `${ratio.toFixed(2)}× (target ≤ ${target}×) ${ok ? "ok" : "OVER"}`,
  );
  console.log(
    `  checkpoint bytes per resource: IpAllocation ${bytes.alloc}, NoopAllocation ${bytes.noop}; ` +
      `allocations per resource in one checkpoint write: IpAllocation ${mallocs.alloc}, NoopAllocation ${mallocs.noop}; ` +
      `peak dynamic-provider RSS during the IpAllocation up: ${rss.toFixed(0)} MB`,
  );
}

const largest = Math.max(...sizes);
const { stack, workDir } = await freshStack("alloc", largest);
const started = performance.now();
await stack.preview({ parallel });
console.log(`preview of ${largest} IpAllocations on a fresh stack: ${seconds(performance.now() - started)}`);
fs.rmSync(workDir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
