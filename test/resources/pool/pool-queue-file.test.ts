import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { encodeHolder, urnPrefix } from "../../../provider/resources/pool/pool-queue-codec";
import {
  isQueueFileRef,
  pidNamespace,
  QueueFileWriter,
  readQueueFile,
  sweepQueueDirs,
} from "../../../provider/resources/pool/pool-queue-file";

const urn = (name: string) => `urn:pulumi:dev::proj::pulumi-nodejs:dynamic/egress-ipam:IpAllocation::${name}`;
const line = (name: string, previous?: string) =>
  encodeHolder({ owner: urn(name) }, urnPrefix(urn(name)), previous && urn(previous));

describe("pool queue file", () => {
  it("gives each holder the file's extent up to its own line, and reads only what was appended since", () => {
    const writer = new QueueFileWriter();
    const a = writer.append(line("a"));
    const b = writer.append(line("b", "a"));
    expect(isQueueFileRef(a) && isQueueFileRef(b)).toBe(true);
    expect(fs.statSync(a.file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(a.file)).mode & 0o777).toBe(0o700);
    expect([a.lines, b.lines]).toEqual([1, 2]);
    expect(b.bytes).toBe(fs.statSync(b.file).size);

    expect(readQueueFile(a, urn("a")).holders.map((h) => h.owner)).toEqual([urn("a")]);
    const c = writer.append(line("c", "b"));
    // `:c` (name only) continues after b, read by the earlier call.
    const read = readQueueFile(c, urn("c"));
    expect(read.holders.map((h) => h.owner)).toEqual([urn("a"), urn("b"), urn("c")]);
    // An earlier holder's extent is served from what was read.
    fs.truncateSync(c.file, 0);
    expect(readQueueFile(b, urn("b")).holders).toHaveLength(3);
  });

  it.each([
    ["a relative path", { file: "q", lines: 1, bytes: 3 }],
    ["no lines", { file: "/q", lines: 0, bytes: 3 }],
    ["a fractional size", { file: "/q", lines: 1, bytes: 2.5 }],
    ["the inline form", { holders: "[]" }],
  ])("is not a file's place: %s", (_, value) => {
    expect(isQueueFileRef(value)).toBe(false);
  });

  it("sweeps directories of programs whose process is gone, and keeps those of running ones", () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sweep-"));
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
      encoding: "utf8",
    }).stdout;
    const dirs = {
      gone: path.join(tmp, `pulumi-egress-ipam-queue-${gone}-x1`),
      running: path.join(tmp, `pulumi-egress-ipam-queue-${process.pid}-x2`),
      parent: path.join(tmp, `pulumi-egress-ipam-queue-${process.ppid}-x3`),
      other: path.join(tmp, `something-${gone}-x4`),
    };
    for (const dir of Object.values(dirs)) {
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, "0.queue"), "[]\n");
    }
    sweepQueueDirs(tmp);
    expect(
      Object.entries(dirs)
        .filter(([, dir]) => fs.existsSync(dir))
        .map(([k]) => k),
    ).toEqual(["running", "parent", "other"]);
  });

  it("judges a directory by its PID only within its own PID namespace (containers sharing /tmp)", () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sweep-"));
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
      encoding: "utf8",
    }).stdout;
    const dirs = {
      ours: path.join(tmp, `pulumi-egress-ipam-queue-${gone}-ns111-x1`),
      // A live program in another container whose PID happens to be free here.
      otherNamespace: path.join(tmp, `pulumi-egress-ipam-queue-${gone}-ns222-x2`),
    };
    for (const dir of Object.values(dirs)) fs.mkdirSync(dir);
    sweepQueueDirs(tmp, "ns111");
    expect(fs.existsSync(dirs.ours)).toBe(false);
    expect(fs.existsSync(dirs.otherNamespace)).toBe(true);
  });

  it("names this program's directory with its PID and PID namespace", () => {
    expect(pidNamespace()).toMatch(/^ns\d+$/);
    const ref = new QueueFileWriter().append(line("x"));
    expect(path.basename(path.dirname(ref.file))).toMatch(
      new RegExp(`^pulumi-egress-ipam-queue-${process.pid}-${pidNamespace()}-`),
    );
  });
});
