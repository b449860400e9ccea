// AWS provisioner benchmark with the real engine: 50 EgressIps (one address each, alternating
// between two availability zones) placed through moto behind a proxy that adds 200 ms to every EC2
// call, at --parallel 16. Placement must not be serialized: the time the latency adds to the up
// must stay within 2× the ideal batch time, ceil(50 / 16) batches × (EC2 calls of one placement ×
// 200 ms). The whole up is reported too, with where its time went: the engine's start and moto's
// own work (a Python server on the same 2 cores) are not ours to cut, and already exceed that bound.
// Needs dist/ (npm run bench builds it) and moto (scripts/setup.sh).
import console from "node:console";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { prepareConsumerProject } from "../scripts/consumer.mjs";

// The helpers are TypeScript that Node loads by stripping types; silence its note that the package
// does not declare a module type.
process.removeAllListeners("warning");
const { createWorld, ec2Client, motoCredentials, secondaryIps, startMoto } =
  await import("../test/support/moto.ts");
const { startFaultProxy } = await import("../test/support/ec2-fault-proxy.ts");

const count = 50;
const parallel = 16;
const latencyMs = 200;
const region = "us-east-1";
const zones = ["us-east-1a", "us-east-1b"];
const subnets = { "us-east-1a": "10.0.1.0/24", "us-east-1b": "10.0.2.0/24" };

const consumerDir = prepareConsumerProject();
const consumerRequire = createRequire(path.join(consumerDir, "package.json"));
const { LocalWorkspace } = consumerRequire("@pulumi/pulumi/automation");
const { EgressIp, IpPool } = consumerRequire("pulumi-egress-ipam");

const moto = await startMoto();
const proxy = await startFaultProxy(moto.endpoint);
const ec2 = ec2Client(moto.endpoint, region);
// Four m5.2xlarge per zone: 14 secondary addresses each, room for 25 per zone.
const hosts = Array.from({ length: 4 }, () => ({ type: "m5.2xlarge", tags: { role: "egress" } }));
const world = await createWorld(ec2, {
  region,
  subnets,
  instances: Object.fromEntries(
    zones.map((z, zi) => [z, hosts.map((h, i) => ({ ...h, privateIp: `10.0.${zi + 1}.${200 + i}` }))]),
  ),
});

const program = async () => {
  const provisioner = { kind: "aws", region, endpoint: proxy.endpoint, hostTags: { role: "egress" } };
  const pools = zones.map(
    (z) => new IpPool(`egress-${z}`, { ranges: [{ subnet: subnets[z] }], cloudReserved: "aws" }),
  );
  const ips = [];
  for (let i = 0; i < count; i++) {
    const zone = i % zones.length;
    const egress = new EgressIp(`ns-${i}`, {
      pool: pools[zone],
      namespace: `ns-${i}`,
      failureDomains: [zones[zone]],
      provisioner,
    });
    ips.push(egress.ips);
  }
  return { ips };
};

/** Start and end (seconds since the up began) of each resource step, by type, from engine events. */
function steps(events) {
  const byType = {};
  for (const [t, e] of events) {
    const m = e.resourcePreEvent?.metadata ?? e.resOutputsEvent?.metadata;
    if (!m || m.op !== "create") continue;
    const type = m.type.split(":").pop();
    const step = ((byType[type] ??= {})[m.urn] ??= {});
    step[e.resourcePreEvent ? "start" : "end"] = t;
  }
  return Object.fromEntries(Object.entries(byType).map(([type, s]) => [type, Object.values(s)]));
}

/** One `up` of the program on a fresh stack with the given latency: seconds, EC2 calls and steps. */
async function timedUp(name, latency) {
  const workDir = path.join(consumerDir, "runs", `bench-aws-${name}`);
  fs.rmSync(workDir, { recursive: true, force: true });
  fs.mkdirSync(path.join(workDir, "backend"), { recursive: true });
  const stack = await LocalWorkspace.createOrSelectStack(
    { stackName: "bench", projectName: "bench-aws", program },
    {
      workDir,
      projectSettings: { name: "bench-aws", runtime: "nodejs", main: workDir },
      envVars: {
        ...motoCredentials,
        PULUMI_HOME: path.join(workDir, ".pulumi-home"),
        PULUMI_BACKEND_URL: `file://${path.join(workDir, "backend")}`,
        PULUMI_CONFIG_PASSPHRASE: "bench",
        PULUMI_SKIP_UPDATE_CHECK: "true",
        PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
      },
    },
  );
  proxy.latencyMs = latency;
  proxy.clear();
  const events = [];
  const t0 = performance.now();
  await stack.up({ parallel, onEvent: (e) => events.push([(performance.now() - t0) / 1000, e]) });
  const seconds = (performance.now() - t0) / 1000;
  const calls = [...proxy.calls];
  const placed = Object.values(await secondaryIps(ec2, Object.values(world.subnetIds))).flat().length;
  proxy.latencyMs = 0;
  await stack.destroy({ parallel });
  fs.rmSync(workDir, { recursive: true, force: true });
  if (placed !== count) throw new Error(`${name}: ${placed} addresses placed, expected ${count}`);
  return { seconds, calls, steps: steps(events) };
}

/** Where the time of an up went: startup, allocations, placement. */
function breakdown(run) {
  const alloc = run.steps.IpAllocation;
  const assign = run.steps.EgressIpAssignment;
  const first = Math.min(...alloc.map((s) => s.start));
  const lastAlloc = Math.max(...alloc.map((s) => s.end));
  const points = assign
    .flatMap((s) => [
      [s.start, 1],
      [s.end, -1],
    ])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let inFlight = 0;
  let maxInFlight = 0;
  for (const [, d] of points) maxInFlight = Math.max(maxInFlight, (inFlight += d));
  return {
    startup: first,
    allocations: lastAlloc - first,
    placement: assign.reduce((sum, s) => sum + s.end - s.start, 0) / assign.length,
    tail: Math.max(...assign.map((s) => s.end)) - lastAlloc,
    maxInFlight,
  };
}

const f = (x) => x.toFixed(1);
const ms = (x) => `${Math.round(x * 1000)} ms`;
let failures = 0;
function report(ok, text) {
  if (!ok) failures++;
  console.log(`${ok ? "PASS" : "FAIL"}  ${text}`);
}

try {
  const base = await timedUp("no-latency", 0);
  const slow = await timedUp("latency", latencyMs);
  const byAction = {};
  for (const c of slow.calls) byAction[c.action] = (byAction[c.action] ?? 0) + 1;
  // The calls one placement makes in sequence: host lookup, subnet scan, assignment (the zones'
  // host inventories and the subnet lookups happen once).
  const perPlacement = Math.round(
    ((byAction.DescribeInstances ?? 0) -
      zones.length +
      (byAction.DescribeNetworkInterfaces ?? 0) +
      (byAction.AssignPrivateIpAddresses ?? 0)) /
      count,
  );
  const batches = Math.ceil(count / parallel);
  const ideal = (batches * perPlacement * latencyMs) / 1000;
  const b0 = breakdown(base);
  const answers = base.calls.map((c) => c.durationMs ?? 0).sort((x, y) => x - y);
  const motoMs = answers.reduce((sum, d) => sum + d, 0);
  const b = breakdown(slow);
  console.log(`EC2 calls with ${latencyMs} ms latency: ${JSON.stringify(byAction)}`);
  console.log(
    `INFO  ${count} EgressIps at --parallel ${parallel} with ${latencyMs} ms per EC2 call: up took ${f(slow.seconds)} s, ` +
      `${f(base.seconds)} s without latency. Where it went: ${f(b.startup)} s engine and program start before ` +
      `the first IpAllocation (${f(b0.startup)} s without latency); ${f(b.allocations)} s from the first to the ` +
      `last IpAllocation (${f(b0.allocations)} s); each placement ${ms(b.placement)} (${ms(b0.placement)}), ` +
      `the last finishing ${f(b.tail)} s after the last IpAllocation (${f(b0.tail)} s). Without latency moto ` +
      `answered ${answers.length} calls in ${ms(answers[answers.length >> 1] / 1000)} (median), ` +
      `${ms(answers.at(-1) / 1000)} (slowest), ${f(motoMs / 1000)} s in all`,
  );
  report(
    b.maxInFlight >= Math.min(parallel, 2) && slow.seconds - base.seconds <= 2 * ideal,
    `placement is not serialized: up to ${b.maxInFlight} EgressIpAssignment steps in flight; EC2 latency added ` +
      `${f(slow.seconds - base.seconds)} s to the up (target ≤ 2 × ideal batch time = 2 × ${batches} batches × ` +
      `${perPlacement} calls × ${latencyMs} ms = ${f(2 * ideal)} s)`,
  );
} finally {
  await proxy.stop();
  await moto.stop();
}
process.exit(failures === 0 ? 0 : 1);
