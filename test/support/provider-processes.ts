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

/** A process as recorded once: its PID and its start time, so a later PID reuse is not taken for it. */
export interface RecordedProcess {
  pid: number;
  /** Field 22 of `/proc/<pid>/stat`: clock ticks after boot; with the PID, names one process for good. */
  started: string;
}

/** `/proc/<pid>/stat` split after the command (which may hold spaces): field 3 on is at index 0. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/**
 * The live descendants of `root` (children, their children, …) whose command line includes `marker`,
 * recorded. The engine starts plugins as children of the CLI, so this finds the ones one `pulumi`
 * process started, whatever other tests run at the same time.
 */
export function descendantsOf(root: number, marker: string): RecordedProcess[] {
  const parent = new Map<number, number>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (fields) parent.set(Number(entry), Number(fields[1])); // field 4, the parent's PID
  }
  const under = (pid: number): boolean => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === root) return true;
    return false;
  };
  const found: RecordedProcess[] = [];
  for (const pid of parent.keys()) {
    if (!under(pid)) continue;
    try {
      if (!fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker)) continue;
    } catch {
      continue;
    }
    const fields = statFields(pid);
    if (fields && fields[0] !== "Z") found.push({ pid, started: fields[19]! });
  }
  return found;
}

/** Whether the recorded process still runs (not exited, not a zombie, its PID not taken by another). */
export function isRunning(p: RecordedProcess): boolean {
  const fields = statFields(p.pid);
  return fields !== undefined && fields[0] !== "Z" && fields[19] === p.started;
}
