// `pulumi up --target` on a holder of a YAML program: the engine checks only the targets, so the
// plugin has not seen the holder's pool. The refusal says so (the pool was left out by --target)
// and names the way on, which works: the pool added as a target (unchanged, it is not updated).
// A pool that is another kind of resource never reaches the plugin from YAML. `pulumi import` of a
// holder is refused, naming how an address in use comes under management.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Harness } from "../support/harness";
import { pluginProject } from "../support/plugin-project";

const program = (holders: string[]) =>
  [
    "name: plugin-target",
    "runtime: yaml",
    "resources:",
    "  pool:",
    "    type: egress-ipam:IpPool",
    '    properties: { ranges: [{ subnet: "10.0.0.0/24" }] }',
    ...holders.flatMap((n) => [
      `  ${n}:`,
      "    type: egress-ipam:IpAllocation",
      '    properties: { pool: "${pool}" }',
    ]),
    "outputs:",
    ...holders.map((n) => `  ${n}: \${${n}.ip}`),
    "",
  ].join("\n");

describe("--target on a holder of a YAML program", () => {
  let h: Harness | undefined;
  afterAll(() => h?.dispose());

  it("is refused naming --target and the pool's URN; with the pool as a target too, up places the holder", async () => {
    h = pluginProject(process.env.EGRESS_IPAM_CONSUMER!, "plugin-target", { "Pulumi.yaml": program(["a1"]) });
    await h.project();
    await h.up();
    const poolUrn = (await h.resources()).find((r) => r.type === "egress-ipam:index:IpPool")!.urn;
    const a2 = poolUrn.replace(/egress-ipam:index:IpPool::pool$/, "egress-ipam:index:IpAllocation::a2");
    fs.writeFileSync(path.join(h.workDir, "Pulumi.yaml"), program(["a1", "a2"]));

    const err = String(
      await h.up({ target: [a2] }).then(
        () => "passed",
        (e: Error) => e,
      ),
    );
    // The refusal itself (the engine's command line, quoted around it, names --target too).
    const refusal = err.slice(err.indexOf("[INVALID_CONFIG]")).split("\n")[0]!;
    expect(refusal).toContain("[INVALID_CONFIG]");
    expect(refusal).toContain(`left out by --target: add --target ${poolUrn}`);
    expect(
      (await h.resources()).some((r) => r.urn === a2),
      "nothing made",
    ).toBe(false);

    const up = await h.up({ target: [poolUrn, a2] });
    expect(up.summary.resourceChanges).not.toHaveProperty("update");
    const placed = (await h.resources()).find((r) => r.urn === a2);
    expect(placed?.outputs?.ip, "a2 after the lowest-free a1").toBe("10.0.0.3");
    await h.destroy();
  });

  // YAML's own type check refuses it before the plugin is asked (the plugin's refusal, for a
  // language that checks no types, is plugin-provider.test's).
  it("a holder whose pool is another kind of resource is refused by YAML's type check, naming both types", async () => {
    const yaml = program(["a1"]).replace(
      "resources:\n",
      'resources:\n  b1:\n    type: egress-ipam:IpAllocation\n    properties: { pool: "${a1}" }\n',
    );
    const p = pluginProject(
      process.env.EGRESS_IPAM_CONSUMER!,
      "plugin-target",
      { "Pulumi.yaml": yaml },
      { stackName: "other-type" },
    );
    try {
      await p.project();
      const err = String(
        await p.preview().then(
          () => "passed",
          (e: Error) => e,
        ),
      );
      expect(err).toContain(
        "pool: Cannot assign 'egress-ipam:index:IpAllocation' to 'egress-ipam:index:IpPool'",
      );
    } finally {
      p.dispose();
    }
  });

  it("pulumi import of an IpAllocation is refused, naming how an address in use comes under management", async () => {
    const p = pluginProject(
      process.env.EGRESS_IPAM_CONSUMER!,
      "plugin-target",
      { "Pulumi.yaml": program(["a1"]) },
      { stackName: "import" },
    );
    try {
      await p.project();
      const run = spawnSync(
        "pulumi",
        ["import", "egress-ipam:index:IpAllocation", "taken", "10.0.0.9", "--yes", "--non-interactive"],
        { cwd: p.workDir, env: { ...process.env, ...p.env }, encoding: "utf8" },
      );
      const out = `${run.stdout}${run.stderr}`;
      expect(run.status, out).not.toBe(0);
      expect(out).toContain("[INVALID_INPUT] IpAllocation 10.0.0.9 cannot be brought in by pulumi import");
      expect(out).toContain('an IpAllocation with ip: "10.0.0.9" and adopt: true');
      expect((await p.resources()).some((r) => r.urn.endsWith("::taken"))).toBe(false);
    } finally {
      p.dispose();
    }
  });
});
