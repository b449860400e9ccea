// What a user installs for the plugin says what it needs: the Python wheel requires a `pulumi` SDK
// that has what its generated code calls, and the plugin started on a Node.js older than the
// package's `engines` refuses at start, in one line naming both versions (directly and through the
// engine and the YAML language host), instead of failing at its first Kubernetes call.
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../scripts/consumer.mjs";
import type { Harness } from "../support/harness";
import { pluginProject, pythonSdk } from "../support/plugin-project";

const consumer = () => {
  const dir = process.env.EGRESS_IPAM_CONSUMER;
  if (!dir) throw new Error("EGRESS_IPAM_CONSUMER is not set: run through vitest's cluster project");
  return dir;
};
const engines = (
  JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")) as {
    engines: { node: string };
  }
).engines.node;
const requiredMajor = Number(/^>=(\d+)/.exec(engines)?.[1]);

/**
 * The `pulumi` Python SDK release that introduced each API the generated SDK calls, where that is
 * later than what the others need (the code generator's own floor, `MinimumValidSDKVersion` in
 * pulumi/pkg/codegen/python/gen.go, names the same release for the same reason).
 */
const introducedIn: [api: string, version: string][] = [["pulumi.runtime.exists_resource", "3.269.0"]];

const versionKey = (v: string) => v.split(".").map(Number) as [number, number, number];
const atLeast = (v: string, floor: string) => {
  const [a, b] = [versionKey(v), versionKey(floor)];
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! > b[i]!;
  return true;
};

/** A `node` on PATH outside this checkout's toolchain that is older than `engines` (the system's here). */
function olderNode(): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    const node = path.join(dir, "node");
    if (!dir || dir.startsWith(repoRoot) || !fs.existsSync(node)) continue;
    const version = execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
    if (Number(/^v(\d+)/.exec(version)?.[1]) < requiredMajor) return node;
  }
  return undefined;
}

/** Runs `node entry args` until it exits or `ms` pass (then kills it by its PID): its exit code and stderr. */
function run(node: string, args: string[], ms: number): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(node, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), ms);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe("installing the plugin and its SDKs", () => {
  const harnesses: Harness[] = [];
  afterAll(() => {
    for (const h of harnesses) h.dispose();
  });

  it("the Python wheel requires a pulumi SDK that has every API its generated code calls", () => {
    const site = pythonSdk(consumer());
    const info = fs.readdirSync(site).find((d) => d.endsWith(".dist-info"))!;
    const metadata = fs.readFileSync(path.join(site, info, "METADATA"), "utf8");
    const requirement = /^Requires-Dist: pulumi\b(.*)$/m.exec(metadata)?.[1] ?? "";
    const floor = /(?:^|,)\s*>=\s*([\d.]+)/.exec(requirement)?.[1];
    expect(floor, `Requires-Dist: pulumi${requirement}`).toBeDefined();
    const code = fs
      .readdirSync(path.join(site, "pulumi_egress_ipam"))
      .filter((f) => f.endsWith(".py"))
      .map((f) => fs.readFileSync(path.join(site, "pulumi_egress_ipam", f), "utf8"))
      .join("\n");
    const used = introducedIn.filter(([api]) => code.includes(api));
    expect(used.length).toBeGreaterThan(0); // the table still names what the generated code calls
    for (const [api, version] of used)
      expect(atLeast(floor!, version), `the wheel requires pulumi>=${floor}; ${api} is in ${version}`).toBe(
        true,
      );
  });

  const old = olderNode();
  it.skipIf(!old)(
    `the plugin's entry started on an older Node (${old}) refuses at once, naming both versions`,
    async () => {
      const entry = path.join(consumer(), "node_modules/pulumi-egress-ipam/dist/plugin/main.js");
      const version = execFileSync(old!, ["--version"], { encoding: "utf8" }).trim();
      const { code, stderr } = await run(old!, [entry, "127.0.0.1:1"], 15_000);
      expect(code).toBe(1);
      const lines = stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`Node.js ${version}`);
      expect(lines[0]).toContain(`Node.js ${engines}`);
    },
  );

  it.skipIf(!old)("a YAML preview with the plugin on an older Node fails with that line", async () => {
    const h = pluginProject(
      consumer(),
      "plugin-node",
      {
        "Pulumi.yaml": [
          "name: plugin-node",
          "runtime: yaml",
          "resources:",
          "  pool:",
          "    type: egress-ipam:IpPool",
          "    properties:",
          "      ranges: [{ subnet: 10.0.8.0/24 }]",
          "",
        ].join("\n"),
      },
      { env: { PULUMI_EGRESS_IPAM_NODE: old! } },
    );
    harnesses.push(h);
    await h.project();
    const version = execFileSync(old!, ["--version"], { encoding: "utf8" }).trim();
    const failure = await h.preview().then(
      () => "",
      (e: unknown) => String(e),
    );
    expect(failure).toContain(`Node.js ${version}`);
    expect(failure).toContain(`Node.js ${engines}`);
  });
});
