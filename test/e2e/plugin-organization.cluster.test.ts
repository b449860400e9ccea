// The stack a YAML program's resources belong to, as the plugin reads it: the taken set of a pool
// is its own stack's checkpoint. A `PULUMI_ORGANIZATION` left exported in the shell (for Pulumi Cloud
// work in another organization) is not that stack's organization: on a file backend it named a
// stack the backend refuses, and where that organization has a stack of the same name, the plugin
// took that stack's addresses as its own. Another organization is another backend here: a `pulumi`
// that runs `--stack acme/<project>/<stack>` against a second file backend (as Pulumi Cloud keeps
// organizations apart), the real CLI and real checkpoints on both sides. The organization is the
// engine's where it gives it (an EgressIp's construction), else the stack's config
// `egress-ipam:organization`; a checkpoint that does not hold the stack's resource is refused
// (STACK_MISMATCH), and so is a config that names another organization than the engine's.
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Harness } from "../support/harness";
import { pluginProject } from "../support/plugin-project";

const program = (holders: string[]) =>
  [
    "name: plugin-org",
    "runtime: yaml",
    "resources:",
    "  pool:",
    "    type: egress-ipam:IpPool",
    '    properties: { ranges: [{ subnet: "10.93.0.0/24", rangeStart: "10.93.0.10" }] }',
    ...holders.flatMap((n, i) => [
      `  ${n}:`,
      "    type: egress-ipam:IpAllocation",
      i === 0
        ? '    properties: { pool: "${pool}" }'
        : `    properties: { pool: "\${pool}", after: "\${${holders[i - 1]}}" }`,
    ]),
    "outputs:",
    ...holders.map((n) => `  ${n}: \${${n}.ip}`),
    "",
  ].join("\n");

const consumer = () => {
  const dir = process.env.EGRESS_IPAM_CONSUMER;
  if (!dir) throw new Error("EGRESS_IPAM_CONSUMER is not set: run through vitest's cluster project");
  return dir;
};
const failureOf = (p: Promise<unknown>) =>
  p.then(
    () => "passed",
    (e: Error) => String(e),
  );

/** A `pulumi` that runs `--stack acme/…` in the backend `backendUrl`, as `organization/…` there. */
function orgsCli(dir: string, backendUrl: string): string {
  const file = path.join(dir, "pulumi-orgs");
  fs.writeFileSync(
    file,
    [
      "#!/usr/bin/env bash",
      "args=()",
      'for a in "$@"; do',
      '  case "$a" in',
      `    acme/*) export PULUMI_BACKEND_URL='${backendUrl}'; a="organization/\${a#acme/}" ;;`,
      "  esac",
      '  args+=("$a")',
      "done",
      'exec pulumi "${args[@]}"',
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  return file;
}

describe("the stack a YAML program's resources belong to", () => {
  const harnesses: Harness[] = [];
  afterAll(() => {
    for (const h of harnesses) h.dispose();
  });
  const project = (holders: string[], env: Record<string, string> = {}, stackName = "test") => {
    const h = pluginProject(
      consumer(),
      "plugin-org",
      { "Pulumi.yaml": program(holders) },
      { env, stackName },
    );
    harnesses.push(h);
    return h;
  };

  it("a file backend's stack is planned from its own checkpoint with PULUMI_ORGANIZATION exported for another organization", async () => {
    const h = project(["a1", "a2"], { PULUMI_ORGANIZATION: "acme" }, "exported");
    await h.project();
    await h.up();
    const ips = (await h.resources())
      .filter((r) => r.type === "egress-ipam:index:IpAllocation")
      .map((r) => r.outputs?.ip)
      .sort();
    expect(ips).toEqual(["10.93.0.10", "10.93.0.11"]);
    const pool = (await h.resources()).find((r) => r.type === "egress-ipam:index:IpPool");
    expect(pool?.inputs?.stack).toBe("organization/plugin-org/exported");
    await h.destroy();
  });

  it("another organization's stack of the same name is not read as this one's, and a stack config naming it is refused", async () => {
    // acme's plugin-org/test holds 10.93.0.10.
    const acme = project(["x"]);
    await acme.project();
    await acme.up();
    expect((await acme.resources()).find((r) => r.urn.endsWith("::x"))?.outputs?.ip).toBe("10.93.0.10");

    const dir = fs.mkdtempSync(path.join(consumer(), "runs", "plugin-org-cli-"));
    const h = project(["a1"], {
      PULUMI_ORGANIZATION: "acme",
      PULUMI_EGRESS_IPAM_CLI: orgsCli(dir, acme.env.PULUMI_BACKEND_URL!),
    });
    await h.project();
    const preview = await h.preview();
    expect(preview.planned("a1")?.ip, "the first address of a fresh stack's pool").toBe("10.93.0.10");
    await h.up();
    expect((await h.resources()).find((r) => r.urn.endsWith("::a1"))?.outputs?.ip).toBe("10.93.0.10");

    // Told in its own config that it is acme's: the checkpoint read has none of a1, so it is not.
    const stack = await h.project();
    await stack.setConfig("egress-ipam:organization", { value: "acme" });
    const err = await failureOf(h.preview());
    const refusal = err.slice(err.indexOf("[STACK_MISMATCH]")).split("\n")[0]!;
    expect(refusal).toContain("[STACK_MISMATCH]");
    expect(refusal).toContain('stack "acme/plugin-org/test"');
    expect(refusal).toContain("egress-ipam:organization");

    await stack.removeConfig("egress-ipam:organization");
    const again = await h.preview();
    expect(again.changeSummary).not.toHaveProperty("create");
    expect(again.changeSummary).not.toHaveProperty("update");
    await h.destroy();
    await acme.destroy();
  });

  it("an EgressIp's construction gives the engine's organization, and a stack config naming another is refused", async () => {
    const yaml = [
      "name: plugin-org",
      "runtime: yaml",
      "resources:",
      "  pool:",
      "    type: egress-ipam:IpPool",
      '    properties: { ranges: [{ subnet: "10.93.1.0/24", rangeStart: "10.93.1.10" }] }',
      "  team:",
      "    type: egress-ipam:EgressIp",
      "    properties:",
      '      pool: "${pool}"',
      "      namespace: team",
      "      failureDomains: [a]",
      "      provisioner: { kind: none, hosts: { a: [node-1] } }",
      "",
    ].join("\n");
    const h = pluginProject(consumer(), "plugin-org", { "Pulumi.yaml": yaml }, { stackName: "construct" });
    harnesses.push(h);
    const stack = await h.project();
    await stack.setConfig("egress-ipam:organization", { value: "acme" });
    const err = await failureOf(h.preview());
    const refusal = err.slice(err.indexOf("[STACK_MISMATCH]")).split("\n")[0]!;
    expect(refusal).toContain(
      '[STACK_MISMATCH] the stack config egress-ipam:organization is "acme", but the engine runs this stack in organization "organization"',
    );

    await stack.removeConfig("egress-ipam:organization");
    await h.up();
    const allocation = (await h.resources()).find((r) => r.type === "egress-ipam:index:IpAllocation");
    expect(allocation?.outputs?.ip).toBe("10.93.1.10");
    expect(allocation?.inputs?.stack).toBe("organization/plugin-org/construct");
    await h.destroy();
  });
});
