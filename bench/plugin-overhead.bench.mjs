// Engine overhead of the plugin's IpAllocation from a YAML program: `pulumi up --parallel 16` of one
// IpPool and N IpAllocations chained by `after` (how programs in other languages order new holders)
// against one Echo and N NoopAllocations chained the same way (the plugin's test kinds, served with
// EGRESS_IPAM_PLUGIN_TESTING=1: they keep what an allocation keeps and plan nothing, the engine's
// floor for the same shape), each on a fresh stack and file backend, alternating which goes first,
// run by the CLI with the YAML language host and the plugin installed from `npm run sdks`'s
// tarball. Prints the medians and their ratio per size (beside engine-overhead's figures for the
// dynamic provider, printed before it) and fails when a ratio exceeds 1.10.
// A chain is one engine step at a time, and the engine writes the whole checkpoint after each:
// at N = 1000 an up of the IpAllocations took about 72 s on this machine. A chain's destroy
// is one step at a time too, so it is skipped: nothing is outside the stack's folder, which is removed.
// Sizes and runs: BENCH_ENGINE_SIZES (default "100,1000"), BENCH_ENGINE_RUNS (default 3).
// Needs the YAML language host (scripts/setup-languages.sh).
import { execFileSync } from "node:child_process";
import console from "node:console";
import * as fs from "node:fs";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { prepareConsumerProject, repoRoot } from "../scripts/consumer.mjs";

const sizes = (process.env.BENCH_ENGINE_SIZES ?? "100,1000").split(",").map(Number);
const runs = Number(process.env.BENCH_ENGINE_RUNS ?? 3);
const target = 1.1;
const parallel = 16;
const version = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")).version;
const consumerDir = prepareConsumerProject();
// The plugin as `npm run sdks` packs it, once per build of the package (as the tests keep it).
const sdks = path.join(repoRoot, ".tools", "sdks", path.basename(consumerDir));
const tarball = path.join(sdks, `pulumi-resource-egress-ipam-v${version}-linux-x64.tar.gz`);
if (!fs.existsSync(tarball)) {
  execFileSync("bash", [path.join(repoRoot, "scripts/sdks.sh"), "plugin"], {
    env: { ...process.env, SDKS_OUT: sdks },
    stdio: ["ignore", "ignore", "inherit"],
  });
}

/** The YAML program of `kind` with `n` holders, each after the one before. */
function program(kind, n) {
  const [poolType, poolProps, holderType, holderProps] =
    kind === "alloc"
      ? [
          "egress-ipam:IpPool",
          '{ ranges: [{ subnet: "10.64.0.0/16" }] }',
          "egress-ipam:IpAllocation",
          () => "",
        ]
      : [
          "egress-ipam:testing:Echo",
          '{ value: "0" }',
          "egress-ipam:testing:NoopAllocation",
          (i) => `, seq: ${i + 1}`,
        ];
  const lines = [
    `name: bench-plugin-${kind}`,
    "runtime: yaml",
    "resources:",
    "  pool:",
    `    type: ${poolType}`,
  ];
  lines.push(`    properties: ${poolProps}`);
  for (let i = 0; i < n; i++) {
    const after = i > 0 ? `, after: "\${h${i - 1}}"` : "";
    lines.push(
      `  h${i}:`,
      `    type: ${holderType}`,
      `    properties: { pool: "\${pool}"${holderProps(i)}${after} }`,
    );
  }
  return `${lines.join("\n")}\n`;
}

/** A fresh project of `kind` with `n` holders, its own PULUMI_HOME (the plugin installed) and file backend. */
function freshProject(kind, n) {
  const runsDir = path.join(consumerDir, "runs");
  fs.mkdirSync(runsDir, { recursive: true });
  const dir = fs.mkdtempSync(path.join(runsDir, `bench-plugin-${kind}-`));
  fs.mkdirSync(path.join(dir, "backend"));
  fs.writeFileSync(path.join(dir, "Pulumi.yaml"), program(kind, n));
  const env = {
    ...process.env,
    PULUMI_HOME: path.join(dir, ".pulumi-home"),
    PULUMI_BACKEND_URL: `file://${path.join(dir, "backend")}`,
    PULUMI_CONFIG_PASSPHRASE: "bench",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    EGRESS_IPAM_PLUGIN_TESTING: "1",
  };
  const pulumi = (...args) =>
    execFileSync("pulumi", args, { cwd: dir, env, stdio: ["ignore", "ignore", "pipe"] });
  pulumi("plugin", "install", "resource", "egress-ipam", version, "-f", tarball);
  pulumi("stack", "init", "bench");
  return { dir, pulumi };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

let failed = false;
for (const n of sizes) {
  const times = { noop: [], alloc: [] };
  for (let run = 0; run < runs; run++) {
    for (const kind of run % 2 === 0 ? ["noop", "alloc"] : ["alloc", "noop"]) {
      const { dir, pulumi } = freshProject(kind, n);
      const started = performance.now();
      pulumi("up", "--yes", "--skip-preview", "--parallel", String(parallel));
      times[kind].push(performance.now() - started);
      console.log(`  N = ${n}, run ${run + 1}, ${kind}: ${seconds(times[kind].at(-1))}`);
      // Nothing outside the stack's own folder (a stack-local pool): removing it is the cleanup.
      // A chain's destroy is as long as its up (one step at a time, the checkpoint written after each).
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  const ratio = median(times.alloc) / median(times.noop);
  const ok = ratio <= target;
  failed ||= !ok;
  console.log(
    `N = ${n}, plugin from YAML: up of ${n} IpAllocations ${times.alloc.map(seconds).join(" / ")} ` +
      `(median ${seconds(median(times.alloc))}), ${n} NoopAllocations ${times.noop.map(seconds).join(" / ")} ` +
      `(median ${seconds(median(times.noop))}): ${ratio.toFixed(2)}× (target ≤ ${target}×) ${ok ? "ok" : "OVER"}`,
  );
}
process.exit(failed ? 1 : 0);
