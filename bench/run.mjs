// Runs every bench/*.bench.mjs in its own Node process (a fresh heap each) and fails when any does.
// Usage: node --expose-gc bench/run.mjs   (npm run bench builds dist/ first)
import { spawnSync } from "node:child_process";
import console from "node:console";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const benches = readdirSync(here)
  .filter((f) => f.endsWith(".bench.mjs"))
  .sort();

const failed = [];
for (const file of benches) {
  console.log(`\n== ${file}`);
  const result = spawnSync(process.execPath, ["--expose-gc", join(here, file)], { stdio: "inherit" });
  if (result.status !== 0) failed.push(file);
}
console.log(failed.length === 0 ? "\nall benchmarks met their targets" : `\nFAILED: ${failed.join(", ")}`);
process.exit(failed.length === 0 ? 0 : 1);
