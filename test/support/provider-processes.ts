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

/**
 * Whether process `pid` holds a TCP connection to a local `port` (its engine's, from its arguments):
 * a dynamic-provider process makes one only once it serves this package's calls (the engine watch,
 * the engine's log service), so one without has run none of this package's code.
 */
export function connectedToPort(pid: number, port: number): boolean {
  let inodes: Set<string>;
  try {
    inodes = new Set(
      fs
        .readdirSync(`/proc/${pid}/fd`)
        .map((fd) => {
          try {
            return /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
          } catch {
            return undefined;
          }
        })
        .filter((i): i is string => i !== undefined),
    );
  } catch {
    return false;
  }
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let lines: string[];
    try {
      lines = fs.readFileSync(table, "utf8").split("\n").slice(1);
    } catch {
      continue;
    }
    for (const line of lines) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[2]!.endsWith(`:${hexPort}`) && inodes.has(f[9]!)) return true;
    }
  }
  return false;
}

/** The engine's port a dynamic-provider process was started with (its argument `host:port`). */
export function enginePortOf(pid: number): number | undefined {
  try {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    const address = argv.find((a) => /^[\w.-]+:\d+$/.test(a));
    return address ? Number(address.slice(address.lastIndexOf(":") + 1)) : undefined;
  } catch {
    return undefined;
  }
}

/** How long ago (ms) a process started, from `/proc` (clock ticks of 10 ms); undefined when it is gone. */
export function processAgeMs(pid: number): number | undefined {
  const fields = statFields(pid);
  if (!fields) return undefined;
  const uptime = Number(fs.readFileSync("/proc/uptime", "utf8").split(" ")[0]);
  return Math.round(uptime * 1000 - Number(fields[19]) * 10);
}

/**
 * The file backend replaces the checkpoint atomically (a temporary file renamed over it), but writes
 * its attributes sidecar (`<stack>.json.attrs`) in place: a CLI killed between the two leaves the
 * sidecar empty, and every later command fails with "failed to load checkpoint: EOF" (it failed a
 * clean-clone CI run; torn-checkpoint-attributes.test.ts makes it by hand). That is the engine's,
 * not this package's, and docs/operating.md tells users the same repair: delete the torn sidecar,
 * which the backend does without. Returns whether it was torn.
 */
export function repairTornSidecar(checkpointFile: string): boolean {
  const sidecar = `${checkpointFile}.attrs`;
  if (!fs.existsSync(sidecar)) return false;
  try {
    JSON.parse(fs.readFileSync(sidecar, "utf8"));
    return false;
  } catch {
    fs.rmSync(sidecar);
    return true;
  }
}
