// The pool queue on the wire: a program of one IpPool and N IpAllocations runs under Pulumi's mocks
// (the SDK serializes every registration as it does for the engine; the engine passes the inputs
// on to `check` unchanged), and the bench counts, per holder, the bytes of its registration
// request (protobuf, as sent), of its queue in it, and of the queue file. Each size and form runs
// in a fresh process, whose peak RSS it also prints. Fails when the file form's registration bytes
// per holder at the largest size differ by more than 10 % from the smallest.
// Sizes: BENCH_QUEUE_SIZES (default "1000,5000"). The inline form (EGRESS_IPAM_POOL_QUEUE=inline)
// runs at the same sizes for comparison. Needs dist/ (npm run bench builds it).
import { spawnSync } from "node:child_process";
import console from "node:console";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import process from "node:process";
import { prepareConsumerProject } from "../scripts/consumer.mjs";

const sizes = (process.env.BENCH_QUEUE_SIZES ?? "1000,5000").split(",").map(Number);
const tolerance = 0.1;

/** In a child: runs the program of `n` holders under mocks and prints what it counted as JSON. */
async function measure(consumerDir, n) {
  const require = createRequire(path.join(consumerDir, "package.json"));
  const pulumi = require("@pulumi/pulumi");
  const { MockMonitor } = require("@pulumi/pulumi/runtime/mocks");
  const counted = { requestBytes: 0, queueBytes: 0, holders: 0, files: new Set() };
  const register = MockMonitor.prototype.registerResource;
  MockMonitor.prototype.registerResource = function (req, callback) {
    if (req.getType().endsWith("egress-ipam:IpAllocation")) {
      counted.holders += 1;
      counted.requestBytes += req.serializeBinary().length;
      const queue = req.getObject().toJavaScript().holder?.queue;
      counted.queueBytes += Buffer.byteLength(JSON.stringify(queue));
      if (typeof queue?.file === "string") counted.files.add(queue.file);
    }
    return register.call(this, req, callback);
  };
  await pulumi.runtime.setMocks(
    { newResource: (args) => ({ id: `${args.name}-id`, state: args.inputs }), call: (args) => args.inputs },
    "bench",
    "queue",
    false,
    "organization",
  );
  const { IpAllocation, IpPool } = require("pulumi-egress-ipam");
  const pool = new IpPool("pool", { ranges: [{ subnet: "10.64.0.0/16" }] });
  const holders = [];
  for (let i = 0; i < n; i++) holders.push(new IpAllocation(`alloc-${i}`, { pool }));
  await new Promise((resolve) => pulumi.all(holders.map((h) => h.urn)).apply(resolve));
  const fileBytes = [...counted.files].reduce((sum, f) => sum + fs.statSync(f).size, 0);
  const rss = Number(/^VmHWM:\s+(\d+)/m.exec(fs.readFileSync("/proc/self/status", "utf8"))[1]) / 1024;
  console.log(JSON.stringify({ ...counted, files: counted.files.size, fileBytes, rss }));
}

if (process.argv[2] === "--measure") {
  await measure(process.argv[3], Number(process.argv[4]));
  process.exit(0);
}

const consumerDir = prepareConsumerProject();
const results = {};
for (const form of ["file", "inline"]) {
  for (const n of sizes) {
    const child = spawnSync(process.execPath, [import.meta.filename, "--measure", consumerDir, String(n)], {
      env: { ...process.env, EGRESS_IPAM_POOL_QUEUE: form },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
      maxBuffer: 1 << 20,
    });
    if (child.status !== 0) throw new Error(`the ${form} queue at N = ${n} failed (exit ${child.status})`);
    const r = JSON.parse(child.stdout.trim().split("\n").at(-1));
    if (r.holders !== n) throw new Error(`counted ${r.holders} holders of ${n}`);
    results[`${form} ${n}`] = r;
    const per = (x) => (x / n).toFixed(0);
    console.log(
      `${form} queue, N = ${n}: per holder ${per(r.requestBytes)} B registration, ${per(r.queueBytes)} B of it ` +
        `the queue, ${per(r.fileBytes)} B in the file; total queue ${(r.queueBytes / 1e6).toFixed(2)} MB on the wire; ` +
        `program peak RSS ${r.rss.toFixed(0)} MB`,
    );
  }
}
const [small, large] = [Math.min(...sizes), Math.max(...sizes)];
const ratio = results[`file ${large}`].requestBytes / large / (results[`file ${small}`].requestBytes / small);
const ok = Math.abs(ratio - 1) <= tolerance;
console.log(
  `registration bytes per holder, N = ${large} against N = ${small}: ${ratio.toFixed(3)}× ` +
    `(target within ±${tolerance * 100} %) ${ok ? "ok" : "OVER"}`,
);
process.exit(ok ? 0 : 1);
