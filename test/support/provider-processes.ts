// The dynamic-provider processes the engine started for one harness: found by their working
// directory (the engine starts plugins in the project's main directory, the harness's own), so
// processes of other tests running at the same time are never counted.
import * as fs from "node:fs";
import * as path from "node:path";

/** PIDs of live `@pulumi/pulumi/cmd/dynamic-provider` processes whose working directory is in `dir`. */
export function providerProcessesIn(dir: string): number[] {
  const root = fs.realpathSync(dir);
  const pids: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (!cmdline.includes("dynamic-provider")) continue;
      const state = /^State:\s+(\w)/m.exec(fs.readFileSync(`/proc/${entry}/status`, "utf8"))?.[1];
      if (state === "Z") continue; // exited, not yet reaped by its parent
      const cwd = fs.readlinkSync(`/proc/${entry}/cwd`);
      if (cwd === root || cwd.startsWith(root + path.sep)) pids.push(Number(entry));
    } catch {
      // Gone while we looked, or not ours to read.
    }
  }
  return pids;
}

/** Runs `during` while sampling {@link providerProcessesIn} every 50 ms; returns every PID seen. */
export async function providerProcessesDuring(
  dir: string,
  during: () => Promise<unknown>,
): Promise<Set<number>> {
  const seen = new Set<number>();
  const sample = () => providerProcessesIn(dir).forEach((pid) => seen.add(pid));
  const timer = setInterval(sample, 50);
  try {
    await during();
  } finally {
    clearInterval(timer);
  }
  return seen;
}

/** PIDs of live Pulumi CLI processes running `command` (e.g. `up`) whose working directory is in `dir`. */
export function cliProcessesIn(dir: string, command: string): number[] {
  const root = fs.realpathSync(dir);
  const pids: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (path.basename(argv[0] ?? "") !== "pulumi" || argv[1] !== command) continue;
      const cwd = fs.readlinkSync(`/proc/${entry}/cwd`);
      if (cwd === root || cwd.startsWith(root + path.sep)) pids.push(Number(entry));
    } catch {
      // Gone while we looked, or not ours to read.
    }
  }
  return pids;
}
