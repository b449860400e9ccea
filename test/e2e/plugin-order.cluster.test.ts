// Preview = up for programs that cannot write a TypeScript program's queue: 30 new holders of one
// pool, chained by `after`, from a YAML, a Python and a Go program, previewed and then brought up
// with --parallel 16 on fresh stacks, run after run: each holder gets at up exactly the address
// its preview showed. EGRESS_IPAM_ORDER_RUNS sets the runs per language (default 1 in `npm test`;
// the issue's 20 are `EGRESS_IPAM_ORDER_RUNS=20 npx vitest run --project cluster <this file>`).
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Harness } from "../support/harness";
import { goSdk, pluginProject, pythonSdk } from "../support/plugin-project";
import { repoRoot } from "../../scripts/consumer.mjs";

const runs = Number(process.env.EGRESS_IPAM_ORDER_RUNS ?? 1);
const holders = Array.from({ length: 30 }, (_, i) => `h${i}`);
const subnet = "10.0.0.0/24";

const yaml = () =>
  [
    "name: plugin-order",
    "runtime: yaml",
    "resources:",
    "  pool:",
    "    type: egress-ipam:IpPool",
    `    properties: { ranges: [{ subnet: "${subnet}" }] }`,
    ...holders.flatMap((n, i) => [
      `  ${n}:`,
      "    type: egress-ipam:IpAllocation",
      // Quoted: an interpolation's braces inside a flow mapping would end it.
      `    properties: { pool: "\${pool}"${i > 0 ? `, after: "\${${holders[i - 1]}}"` : ""} }`,
    ]),
    "outputs:",
    ...holders.map((n) => `  ${n}: \${${n}.ip}`),
    "",
  ].join("\n");

const python = () => `import pulumi
import pulumi_egress_ipam as ipam

pool = ipam.IpPool("pool", ranges=[ipam.IpPoolRangeArgs(subnet="${subnet}")])
before = None
for i in range(${holders.length}):
    before = ipam.IpAllocation(f"h{i}", pool=pool, after=before)
    pulumi.export(f"h{i}", before.ip)
`;

const go = () => `package main

import (
	"fmt"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"pulumi-egress-ipam/sdk/go/egressipam"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		pool, err := egressipam.NewIpPool(ctx, "pool", &egressipam.IpPoolArgs{
			Ranges: egressipam.IpPoolRangeArray{egressipam.IpPoolRangeArgs{Subnet: pulumi.String("${subnet}")}},
		})
		if err != nil {
			return err
		}
		var before *egressipam.IpAllocation
		for i := 0; i < ${holders.length}; i++ {
			args := &egressipam.IpAllocationArgs{Pool: pool}
			if before != nil {
				args.After = before
			}
			if before, err = egressipam.NewIpAllocation(ctx, fmt.Sprintf("h%d", i), args); err != nil {
				return err
			}
			ctx.Export(fmt.Sprintf("h%d", i), before.Ip)
		}
		return nil
	})
}
`;

function project(language: "yaml" | "python" | "go"): Harness {
  const consumer = process.env.EGRESS_IPAM_CONSUMER!;
  const runtime = `name: plugin-order\nruntime: ${language}\n`;
  if (language === "yaml") return pluginProject(consumer, "plugin-order", { "Pulumi.yaml": yaml() });
  if (language === "python")
    return pluginProject(
      consumer,
      "plugin-order",
      { "Pulumi.yaml": runtime, "__main__.py": python() },
      { env: { PYTHONPATH: pythonSdk(consumer) } },
    );
  const sdk = goSdk(consumer);
  const version = JSON.parse(
    fs.readFileSync(path.join(repoRoot, "node_modules/@pulumi/pulumi/package.json"), "utf8"),
  ).version as string;
  const h = pluginProject(consumer, "plugin-order", {
    "Pulumi.yaml": runtime,
    "main.go": go(),
    "go.mod":
      `module plugin-order\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/pulumi/pulumi/sdk/v3 v${version}\n\tpulumi-egress-ipam/sdk/go v0.0.0\n)\n\n` +
      `replace pulumi-egress-ipam/sdk/go => ${sdk}\n`,
    "go.sum": fs.readFileSync(path.join(sdk, "go.sum"), "utf8"),
  });
  execFileSync("go", ["mod", "tidy"], { cwd: h.workDir, stdio: ["ignore", "ignore", "pipe"] });
  return h;
}

describe.each(["yaml", "python", "go"] as const)(
  "30 chained holders of one pool from %s, --parallel 16",
  (language) => {
    const made: Harness[] = [];
    afterAll(() => made[0]?.dispose());

    it(
      `up assigns every address its preview showed, in each of ${runs} runs on fresh stacks`,
      async () => {
        const first = project(language);
        made.push(first);
        const env: Record<string, string> =
          language === "python" ? { PYTHONPATH: pythonSdk(process.env.EGRESS_IPAM_CONSUMER!) } : {};
        for (let run = 0; run < runs; run++) {
          const h = Harness.forProject(first.consumerDir, first.workDir, { stackName: `run${run}`, env });
          await h.project();
          const preview = await h.preview({ parallel: 16 });
          const planned = Object.fromEntries(holders.map((n) => [n, preview.planned(n)?.ip]));
          expect(new Set(Object.values(planned)).size, `run ${run}: distinct planned addresses`).toBe(30);
          const up = await h.up({ parallel: 16 });
          const got = Object.fromEntries(holders.map((n) => [n, up.outputs[n]?.value]));
          expect(got, `run ${run}`).toEqual(planned);
        }
      },
      // A run takes 10–30 s, and over 60 s from Go on a loaded machine (CI: its program is compiled
      // while the other cluster file runs): a bound for hangs only.
      runs * 180_000,
    );
  },
);
