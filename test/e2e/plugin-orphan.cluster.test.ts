// A `pulumi up` of a YAML program killed with SIGKILL (a CI timeout, the OOM killer) leaves no
// egress-ipam plugin process behind, wherever the kill lands: the plugin, started by the engine with
// its address, notices that the engine is gone and exits, as the dynamic provider does
// (provider-orphan.cluster.test.ts). Plugin processes are found as the CLI's descendants while it
// runs and recorded by PID and start time; a survivor is stopped by that PID, never by name.
import { spawn } from "node:child_process";
import * as net from "node:net";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Harness } from "../support/harness";
import { pluginProject } from "../support/plugin-project";
import {
  cliProcessesIn,
  descendantsOf,
  isRunning,
  type RecordedProcess,
} from "../support/provider-processes";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** What the plugin's processes run: `node …/pulumi-egress-ipam/dist/plugin/main.js <engine>`. */
const pluginEntry = "dist/plugin/main.js";
// A chain long enough that the kill lands mid-up at every point below (100 take about 2.4 s alone).
const count = 400;

async function until(what: string, ok: () => boolean, ms: number): Promise<number> {
  const started = Date.now();
  while (!ok()) {
    if (Date.now() - started > ms) throw new Error(`${what} did not happen within ${ms / 1000} s`);
    await sleep(100);
  }
  return Date.now() - started;
}

/** A pool and `count` IpAllocations chained by `after`. */
function chain(): string {
  const lines = [
    "name: plugin-orphan",
    "runtime: yaml",
    "resources:",
    "  pool:",
    "    type: egress-ipam:IpPool",
    "    properties:",
    "      ranges: [{ subnet: 10.74.0.0/22 }]",
  ];
  for (let i = 0; i < count; i++) {
    lines.push(`  a${i}:`, "    type: egress-ipam:IpAllocation", "    properties:", "      pool: ${pool}");
    if (i > 0) lines.push(`      after: \${a${i - 1}}`);
  }
  return `${lines.join("\n")}\n`;
}

describe("a killed pulumi up of a YAML program leaves no plugin process", () => {
  const harnesses: Harness[] = [];
  const plugins: RecordedProcess[] = [];
  // The YAML language host the killed CLI started outlives it for minutes (Pulumi's, not this
  // package's, and not what this tests): stopped at the end by its recorded PID too.
  const hosts: RecordedProcess[] = [];
  afterAll(() => {
    // A plugin that did not exit (the failure this tests) is stopped by its recorded PID.
    for (const p of [...plugins, ...hosts]) if (isRunning(p)) process.kill(p.pid, "SIGKILL");
    for (const h of harnesses) h.dispose();
  });

  it("started with the address of an engine that is gone, the plugin exits within seconds", async () => {
    const consumer = process.env.EGRESS_IPAM_CONSUMER;
    if (!consumer) throw new Error("EGRESS_IPAM_CONSUMER is not set: run through vitest's cluster project");
    // A port nobody listens at any more: the address of an engine that has died.
    const port = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const entry = path.join(consumer, "node_modules/pulumi-egress-ipam", pluginEntry);
    const child = spawn(process.execPath, [entry, `127.0.0.1:${port}`], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000); // by its PID
    const code = await exited;
    clearTimeout(timer);
    expect({ code, stderr: stderr.trim() }).toEqual({
      code: 1,
      stderr: `pulumi-egress-ipam: the engine at 127.0.0.1:${port} is gone; this provider process exits`,
    });
  });

  it.each([[1], [3], [6]])(
    "killed %i s into the up: no plugin process runs 30 s later",
    async (seconds) => {
      const consumer = process.env.EGRESS_IPAM_CONSUMER;
      if (!consumer) throw new Error("EGRESS_IPAM_CONSUMER is not set: run through vitest's cluster project");
      const h = pluginProject(consumer, "plugin-orphan", { "Pulumi.yaml": chain() });
      harnesses.push(h);
      await h.project();

      const up = h.up().then(
        () => "finished",
        () => "failed",
      );
      await until("the CLI starting", () => cliProcessesIn(h.workDir, "up").length > 0, 60_000);
      const [cli] = cliProcessesIn(h.workDir, "up");
      const seen = new Map<string, RecordedProcess>();
      const started = Date.now();
      while (Date.now() - started < seconds * 1000) {
        for (const p of descendantsOf(cli!, pluginEntry)) seen.set(`${p.pid}/${p.started}`, p);
        await sleep(50);
      }
      for (const p of descendantsOf(cli!, pluginEntry)) seen.set(`${p.pid}/${p.started}`, p);
      plugins.push(...seen.values());
      hosts.push(...descendantsOf(cli!, "pulumi-language-yaml"));
      const running = [...seen.values()].filter(isRunning);
      process.kill(cli!, "SIGKILL");
      expect(await up).toBe("failed"); // killed before it finished, so the check below means something
      console.log(
        `killed ${seconds} s in: plugin processes seen ${[...seen.values()].map((p) => p.pid).join(", ") || "none"}, ` +
          `running at the kill ${running.map((p) => p.pid).join(", ") || "none"}`,
      );
      if (seconds >= 3) expect(running.length).toBeGreaterThan(0); // the kill landed while a plugin served
      let took: number | undefined;
      try {
        took = await until("every plugin process exiting", () => !running.some(isRunning), 30_000);
      } catch {
        // reported below, with the survivors
      }
      const survivors = running.filter(isRunning).map((p) => p.pid);
      expect(survivors, `plugin processes still running 30 s after the CLI was killed`).toEqual([]);
      console.log(`killed ${seconds} s in: the plugin processes exited ${took} ms after the CLI was killed`);
    },
    120_000,
  );
});
