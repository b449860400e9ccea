// The docs' Python blocks run and their Go blocks compile, with the SDKs `npm run sdks` generates
// from the plugin's schema (the cluster setup builds them once per build): each Python block under
// the Python SDK's mocks (support/run-python-blocks.py, in the venv of scripts/setup-languages.sh),
// every resource it registers judged against the schema as the YAML blocks are
// (language-examples.test.ts); each Go block as a package of one module that requires the Go SDK
// and replaces it with the generated folder, gofmt-clean. Both as a user copies them: whole programs.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeBlocks, documentationFiles, repoRoot, type CodeBlock } from "../support/markdown";
import { goSdk, pythonSdk, pythonVenv } from "../support/plugin-project";
import { inputProblems, pluginSchema } from "../support/schema-inputs";

const consumer = () => {
  const dir = process.env.EGRESS_IPAM_CONSUMER;
  if (!dir) throw new Error("EGRESS_IPAM_CONSUMER is not set: run through vitest's cluster project");
  return dir;
};
const blocks = (lang: string) =>
  documentationFiles()
    .flatMap(codeBlocks)
    .filter((b) => b.lang === lang);
const resourcePages = documentationFiles().filter((f) => f.startsWith("docs/resources/"));
const where = (b: CodeBlock, line = 1) => `${b.file}:${b.line + line - 1}`;

/** Runs a command, returning what it printed; a failure to start it (not its exit code) throws. */
function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const r = spawnSync(command, args, {
    cwd,
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 120_000,
  });
  if (r.error) throw r.error;
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

let work = "";
beforeAll(() => {
  const runs = path.join(consumer(), "runs");
  fs.mkdirSync(runs, { recursive: true });
  work = fs.mkdtempSync(path.join(runs, "doc-blocks-"));
});
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

describe("Python blocks of README.md and docs/", () => {
  const python = blocks("python");

  it("are on every resource page", () => {
    for (const page of resourcePages) expect(python.map((b) => b.file)).toContain(page);
  });

  it("run under the Python SDK's mocks, registering only what the plugin's schema has", () => {
    const dir = path.join(work, "python");
    fs.mkdirSync(dir);
    const files = python.map((b, i) => {
      const file = path.join(dir, `block${i}.py`);
      fs.writeFileSync(file, b.code);
      return file;
    });
    const records = path.join(dir, "records.jsonl");
    const runner = path.join(repoRoot, "test", "support", "run-python-blocks.py");
    const schemaFile = path.join(repoRoot, "provider", "plugin", "schema.json");
    const ran = run(path.join(pythonVenv(), "bin", "python"), [runner, schemaFile, records, ...files], dir, {
      PYTHONPATH: pythonSdk(consumer()),
    });
    expect(ran.status, ran.output).toBe(0);

    const schema = pluginSchema();
    const reference = (v: unknown) =>
      typeof v === "string" && v.startsWith("resource ") ? v.slice("resource ".length) : undefined;
    const registered = new Map<string, number>();
    const problems: string[] = [];
    for (const line of fs.readFileSync(records, "utf8").split("\n").filter(Boolean)) {
      const r = JSON.parse(line) as {
        program: string;
        error?: string;
        type?: string;
        name?: string;
        inputs?: Record<string, unknown>;
      };
      const block = python[files.indexOf(r.program)]!;
      if (r.error) {
        // The block's own line where it has one, and the error's last line.
        const lines = [...r.error.matchAll(/File "([^"]+)", line (\d+)/g)].filter((m) => m[1] === r.program);
        const at = lines.length > 0 ? Number(lines.at(-1)![2]) : 1;
        problems.push(`${where(block, at)}: ${r.error.trim().split("\n").at(-1)}`);
        registered.set(r.program, registered.get(r.program) ?? 0);
        continue;
      }
      registered.set(r.program, (registered.get(r.program) ?? 0) + 1);
      for (const p of inputProblems(schema, r.type!, r.inputs ?? {}, reference))
        problems.push(`${where(block)}: ${r.name}: ${p}`);
    }
    // A block that registers nothing proves nothing (one that failed is reported above).
    for (const [i, file] of files.entries())
      if (!registered.has(file)) problems.push(`${where(python[i]!)}: registers no resource`);
    expect(problems).toEqual([]);
  });
});

describe("Go blocks of README.md and docs/", () => {
  const go = blocks("go");

  it("are on every resource page", () => {
    for (const page of resourcePages) expect(go.map((b) => b.file)).toContain(page);
  });

  it("compile as programs of a module that requires the Go SDK, and are gofmt-clean", () => {
    const dir = path.join(work, "go");
    fs.mkdirSync(dir);
    const sdk = goSdk(consumer());
    const pulumiSdk = (
      JSON.parse(
        fs.readFileSync(path.join(repoRoot, "node_modules/@pulumi/pulumi/package.json"), "utf8"),
      ) as {
        version: string;
      }
    ).version;
    fs.writeFileSync(
      path.join(dir, "go.mod"),
      `module docblocks\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/pulumi/pulumi/sdk/v3 v${pulumiSdk}\n` +
        `\tpulumi-egress-ipam/sdk/go v0.0.0\n)\n\nreplace pulumi-egress-ipam/sdk/go => ${sdk}\n`,
    );
    fs.copyFileSync(path.join(sdk, "go.sum"), path.join(dir, "go.sum"));
    // Each block a package of its own: one `go build` compiles them all, and links none.
    for (const [i, b] of go.entries()) {
      fs.mkdirSync(path.join(dir, `block${i}`));
      fs.writeFileSync(
        path.join(dir, `block${i}`, "main.go"),
        `${b.code.replace(/^package main$/m, `package block${i}`)}\n`,
      );
    }
    const tidy = run("go", ["mod", "tidy"], dir);
    expect(tidy.status, tidy.output).toBe(0);

    const problems: string[] = [];
    const built = run("go", ["build", "./..."], dir);
    for (const m of built.output.matchAll(/^(?:\.\/)?block(\d+)\/main\.go:(\d+):(?:\d+:)? (.*)$/gm))
      problems.push(`${where(go[Number(m[1])]!, Number(m[2]))}: ${m[3]}`);
    if (built.status !== 0 && problems.length === 0) problems.push(built.output);
    const unformatted = run("gofmt", ["-l", "."], dir).output.split("\n").filter(Boolean);
    for (const f of unformatted)
      problems.push(`${where(go[Number(/block(\d+)/.exec(f)![1])]!)}: not gofmt-formatted`);
    expect(problems).toEqual([]);
  });
});
