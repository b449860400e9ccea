import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { importProgramPython } from "../../provider/cli/import-program-python";
import schema from "../../provider/plugin/schema.json";
import { ocpStatic, plan } from "./fixtures/imported-plan";

// Modules standing in for `pulumi` and the plugin's SDK: each resource records its name and the
// arguments it was given (a resource given as an argument as `<Kind name>`), and the program's
// exports, printed as JSON when the program ends. The real SDK runs the program in
// test/e2e/import-yaml.cluster.test.ts.
const stubs = {
  "pulumi_egress_ipam.py": `import json
calls = []
def _plain(v):
    if isinstance(v, _Resource): return "<%s %s>" % (v.kind, v.name)
    if isinstance(v, dict): return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list): return [_plain(x) for x in v]
    return v
class _Resource:
    def __init__(self, kind, name, args):
        self.kind, self.name, self.ips = kind, name, "<%s.ips>" % name
        calls.append({"kind": kind, "name": name, "args": _plain(args)})
def IpPool(name, **args): return _Resource("IpPool", name, args)
def EgressIp(name, **args): return _Resource("EgressIp", name, args)
def CidrAssignment(name, **args): return _Resource("CidrAssignment", name, args)
`,
  "pulumi.py": `import atexit, json
import pulumi_egress_ipam
exports = {}
def export(name, value): exports[name] = value
atexit.register(lambda: print(json.dumps({"calls": pulumi_egress_ipam.calls, "exports": exports})))
`,
};

interface Call {
  kind: string;
  name: string;
  args: Record<string, unknown>;
}

function run(program: string): { calls: Call[]; exports: Record<string, unknown> } {
  fs.writeFileSync(path.join(dir, "__main__.py"), program);
  const python = spawnSync("python3", ["__main__.py"], {
    cwd: dir,
    env: { ...process.env, PYTHONPATH: dir },
    encoding: "utf8",
  });
  expect(python.stderr).toBe("");
  expect(python.status).toBe(0);
  return JSON.parse(python.stdout) as { calls: Call[]; exports: Record<string, unknown> };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "import-python-"));
for (const [file, text] of Object.entries(stubs)) fs.writeFileSync(path.join(dir, file), text);

describe("import's Python program", () => {
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const program = importProgramPython(plan);

  it("declares the plan's resources in order, every value the plan's", () => {
    const { calls, exports } = run(program);
    expect(calls).toEqual([
      {
        kind: "IpPool",
        name: "egress-zone-a",
        args: { ranges: [{ subnet: "10.0.1.0/24", gateway: "10.0.1.0" }], exclude: ["10.0.1.5"] },
      },
      {
        kind: "IpPool",
        name: "10.0.2.0-24",
        args: { ranges: [{ subnet: "10.0.2.0/24", gateway: "10.0.2.0" }], cloud_reserved: "aws" },
      },
      {
        kind: "EgressIp",
        name: "team-a",
        args: {
          namespace: "team-a",
          pool: { "zone-a": "<IpPool egress-zone-a>", "zone-b": "<IpPool 10.0.2.0-24>" },
          failure_domains: ["zone-a", "zone-b"],
          provisioner: { ...ocpStatic, cloud: { kind: "aws", region: "us-east-1" } },
          adopt: true,
        },
      },
      {
        kind: "EgressIp",
        name: "default",
        args: {
          namespace: "default",
          pool: { "zone-a": "<IpPool egress-zone-a>" },
          failure_domains: ["zone-a"],
          provisioner: { kind: "antrea", externalIPPool: "pool-${x}" },
          adopt: true,
          // Each EgressIp after the one before it: one order for preview and up (holder-order).
          after: "<EgressIp team-a>",
        },
      },
      {
        kind: "CidrAssignment",
        name: "egress-zone-a-hosts",
        args: { pool: "<IpPool egress-zone-a>", provisioner: { kind: "ovn" }, hosts: ["n1", "n3"] },
      },
    ]);
    expect(exports).toEqual({ teamAIps: "<team-a.ips>", defaultIps: "<default.ips>" });
  });

  it("names only arguments the plugin's schema has (in the SDK's snake_case)", () => {
    const resources = schema.resources as Record<string, { inputProperties: Record<string, unknown> }>;
    const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    for (const call of run(program).calls) {
      const known = Object.keys(resources[`egress-ipam:index:${call.kind}`]?.inputProperties ?? {}).map(
        snake,
      );
      expect(known, call.kind).not.toEqual([]);
      expect(
        Object.keys(call.args).filter((k) => !known.includes(k)),
        call.name,
      ).toEqual([]);
    }
  });

  it("keeps the header, problems and what the cluster had as comments, each on its own line", () => {
    const comments = program.split("\n").filter((l) => l.startsWith("#"));
    expect(comments).toContain(
      "# Written by `pulumi-egress-ipam import` from https://api.prod:6443 (context admin@prod).",
    );
    expect(comments).toContain("# not imported: 10.9.9.9 of namespace lost: give --cidr");
    expect(comments).toContain("# 10.0.1.2 in zone-a (placed by the platform): Egress e");
    expect(comments).toContain("# --cidr x: 1");
  });

  it("an empty plan is a program that declares nothing", () => {
    const empty = { ...plan, pools: [], egressIps: [], cidrAssignments: [], problems: [] };
    expect(run(importProgramPython(empty))).toEqual({ calls: [], exports: {} });
  });
});
