// The side channel of a pool's holder queue: the program appends one line per holder (see
// pool-queue-codec) to a file, and each holder's input names the file and how far it reached when
// the holder was added, instead of carrying every earlier line. So the queue costs one line per
// holder in total, where the inline form (every line so far in every holder) grows with the square.
//
// Why it is safe:
// - One machine: the engine starts the language host (or the Automation API's inline program runs)
//   and the dynamic-provider process side by side, as the same user; the file is on that machine.
// - Ordered: a holder's input resolves only after its line is on disk, and the engine calls `check`
//   only after the input resolves, so the lines a check asks for are always written.
// - Concurrent stacks: each program process writes under its own fresh directory (mode 0700), each
//   pool object to its own file; a provider reads only the file its holders name.
// - Cleanup: the program removes its directory when it exits, and the first pool of a program
//   removes directories left by programs whose process is gone (killed): by PID within its own PID
//   namespace only, since containers sharing /tmp each count PIDs of their own.
// - Failure: a file the provider cannot read, or one shorter than the input says, fails the holder's
//   check naming the file and the way out (`EGRESS_IPAM_POOL_QUEUE=inline`); it never plans alone.
import { IpamError } from "../../core/ipam-error";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { shared } from "../../core/process-registry";
import { decodeHolders, type QueuedHolder } from "./pool-queue-codec";

/** Where a holder's queue is: the first `lines` lines (`bytes` bytes) of `file`, the holder's own last. */
export interface QueueFileRef {
  file: string;
  lines: number;
  bytes: number;
}

const dirPrefix = "pulumi-egress-ipam-queue-";

/** Whether the process `pid` still runs (a process of another user counts as running). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/**
 * This process's PID namespace (`ns4026531836`, from /proc/self/ns/pid), or "" where there is none
 * to read: a PID names a process only inside its namespace, and containers may share one /tmp.
 */
export function pidNamespace(): string {
  try {
    const inode = /\[(\d+)\]/.exec(fs.readlinkSync("/proc/self/ns/pid"))?.[1];
    return inode ? `ns${inode}` : "";
  } catch {
    return "";
  }
}

/**
 * Removes queue directories in `tmp` whose program process is gone; errors are ignored. A directory
 * names its program's PID and PID namespace (`pulumi-egress-ipam-queue-<pid>-ns<inode>-…`): one of
 * another namespace (another container sharing /tmp) is never judged by a PID of ours, so it stays.
 * Directories of earlier versions name no namespace and are judged by the PID alone, as they were.
 */
export function sweepQueueDirs(tmp = os.tmpdir(), namespace = pidNamespace()): void {
  let entries: string[] = [];
  try {
    entries = fs.readdirSync(tmp);
  } catch {
    return;
  }
  for (const entry of entries) {
    const m = /^pulumi-egress-ipam-queue-(\d+)-(?:(ns\d+)-)?/.exec(entry);
    if (!m) continue;
    const pid = Number(m[1]);
    if (m[2] !== undefined && m[2] !== namespace) continue;
    if (pid === process.pid || isRunning(pid)) continue;
    try {
      fs.rmSync(path.join(tmp, entry), { recursive: true, force: true });
    } catch {
      // Another user's, or being removed by another program: not ours to insist on.
    }
  }
}

/** This program process's queue directory, made (and stale ones swept) on first use. */
function queueDir(): { dir: string; next: number } {
  return shared("pool-queue-dir", String(process.pid), () => {
    sweepQueueDirs();
    const ns = pidNamespace();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${dirPrefix}${process.pid}-${ns ? `${ns}-` : ""}`));
    process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
    return { dir, next: 0 };
  });
}

/** The program side: one pool object's queue file, appended to as holders are added. */
export class QueueFileWriter {
  private lines = 0;
  private bytes = 0;
  private readonly file: string;

  constructor() {
    const d = queueDir();
    this.file = path.join(d.dir, `${d.next++}.queue`);
  }

  /** Appends a holder's line (from `encodeHolder`); returns the queue up to and including it. */
  append(line: string): QueueFileRef {
    const data = `${line}\n`;
    fs.appendFileSync(this.file, data, { mode: 0o600 });
    this.lines += 1;
    this.bytes += Buffer.byteLength(data);
    return { file: this.file, lines: this.lines, bytes: this.bytes };
  }
}

/** What a provider process has read of one queue file. */
interface ReadSoFar {
  bytes: number;
  holders: QueuedHolder[];
  /** Holders known to be planned (or left to their own check) in this process, in queue order. */
  planned: number;
}

/** Whether a value names a queue file (the file form of a holder's queue). */
export function isQueueFileRef(value: unknown): value is QueueFileRef {
  const v = value as Partial<QueueFileRef> | undefined;
  return (
    typeof v?.file === "string" &&
    path.isAbsolute(v.file) &&
    Number.isSafeInteger(v.lines) &&
    v.lines! > 0 &&
    Number.isSafeInteger(v.bytes) &&
    v.bytes! > 0
  );
}

/**
 * The provider side: the first `ref.lines` holders of the file, read once per process (each check
 * reads only what was appended since the last one), and how many of them were planned already.
 * @throws IpamError INVALID_STATE naming the file when it cannot be read, is shorter than `ref` says, or has a line
 *   that is not a holder.
 */
export function readQueueFile(ref: QueueFileRef, someOwner: string): ReadSoFar {
  const read = shared<ReadSoFar>("pool-queue-file", ref.file, () => ({ bytes: 0, holders: [], planned: 0 }));
  if (read.bytes < ref.bytes) {
    const buffer = Buffer.alloc(ref.bytes - read.bytes);
    const fd = fs.openSync(ref.file, "r");
    let got = 0;
    try {
      while (got < buffer.length) {
        const n = fs.readSync(fd, buffer, got, buffer.length - got, read.bytes + got);
        if (n === 0) break;
        got += n;
      }
    } finally {
      fs.closeSync(fd);
    }
    const text = buffer.subarray(0, got).toString("utf8");
    if (got < buffer.length || !text.endsWith("\n")) {
      throw new IpamError(
        "INVALID_STATE",
        `has ${read.bytes + got} bytes where the program wrote ${ref.bytes}`,
      );
    }
    read.holders.push(...decodeHolders(text.slice(0, -1), someOwner, read.holders.at(-1)?.owner));
    read.bytes = ref.bytes;
  }
  if (read.holders.length < ref.lines) {
    throw new IpamError(
      "INVALID_STATE",
      `has ${read.holders.length} holders where the program wrote ${ref.lines}`,
    );
  }
  return read;
}
