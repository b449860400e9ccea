// An example project copied where a user would have it: its own folder with node_modules holding
// this package from its packed tarball, run with the Pulumi CLI and the Node.js language host; a
// YAML or Python example with the egress-ipam plugin installed into its PULUMI_HOME (and the Python
// SDK on PYTHONPATH), run with that language's host.
import { dumpYaml, loadYaml } from "@kubernetes/client-node";
import * as fs from "node:fs";
import * as path from "node:path";
import { prepareConsumerProject, repoRoot } from "../../scripts/consumer.mjs";
import { Harness } from "./harness";
import { installPlugin, pythonSdk } from "./plugin-project";

/** Dependencies of the example projects besides pulumi-egress-ipam, @pulumi/pulumi and typescript. */
function exampleDependencies(): Record<string, string> {
  const deps: Record<string, string> = {};
  for (const dir of fs.readdirSync(path.join(repoRoot, "examples"))) {
    const file = path.join(repoRoot, "examples", dir, "package.json");
    if (!fs.existsSync(file)) continue;
    for (const [name, version] of Object.entries(
      (JSON.parse(fs.readFileSync(file, "utf8")).dependencies ?? {}) as Record<string, string>,
    )) {
      if (!["pulumi-egress-ipam", "@pulumi/pulumi", "typescript"].includes(name)) deps[name] = version;
    }
  }
  return deps;
}

/** The examples' shared node_modules, installed once per build of this package. */
export function prepareExamplesProject(): string {
  return prepareConsumerProject({ name: "examples", extraDependencies: exampleDependencies() });
}

/** Names of the example folders (each a complete Pulumi project). */
export function exampleNames(): string[] {
  return fs
    .readdirSync(path.join(repoRoot, "examples"))
    .filter((d) => fs.existsSync(path.join(repoRoot, "examples", d, "Pulumi.yaml")))
    .sort();
}

function copyTree(from: string, to: string, skip: (name: string) => boolean): void {
  fs.mkdirSync(to, { recursive: true });
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    if (skip(entry.name)) continue;
    const src = path.join(from, entry.name);
    if (entry.isDirectory()) copyTree(src, path.join(to, entry.name), () => false);
    else fs.copyFileSync(src, path.join(to, entry.name));
  }
}

/** The runtime of an example's program, as its Pulumi.yaml names it: `nodejs`, `yaml`, `python`. */
export function exampleRuntime(name: string): string {
  const file = path.join(repoRoot, "examples", name, "Pulumi.yaml");
  const { runtime } = loadYaml(fs.readFileSync(file, "utf8")) as { runtime: string | { name: string } };
  return typeof runtime === "string" ? runtime : runtime.name;
}

/** Stack config (`key: value` of `Pulumi.<stack>.yaml`) as a test adapts it to its cluster. */
export type ConfigRewrite = (config: Record<string, unknown>) => Record<string, unknown>;

/** An example copied into a fresh folder of the examples project, ready for `pulumi` commands. */
export class ExampleProject {
  private constructor(
    readonly name: string,
    readonly dir: string,
    readonly harness: Harness,
    private readonly rewrite?: ConfigRewrite,
  ) {}

  /** Applies the test's rewrite to the stack's config file, as the example and its steps give it. */
  private rewriteConfig(): void {
    const file = path.join(this.dir, `Pulumi.${this.harness.stackName}.yaml`);
    if (!this.rewrite || !fs.existsSync(file)) return;
    const doc = (loadYaml(fs.readFileSync(file, "utf8")) ?? {}) as { config?: Record<string, unknown> };
    doc.config = this.rewrite(doc.config ?? {});
    fs.writeFileSync(file, dumpYaml(doc));
  }

  /**
   * Copies `examples/<name>` (without `node_modules` and the `step*` overlays) into a fresh folder
   * next to the shared node_modules, and a harness that runs the CLI there on stack `stackName`.
   * `options.config` rewrites the stack's config file (now and after every step), e.g. to give
   * names unique to the test. An example in another language gets, instead of node_modules, the
   * plugin and Python SDK of the consumer project `options.sdks` (see plugin-project), as a user
   * installs them from a checkout.
   */
  static create(
    examplesDir: string,
    name: string,
    options: { env?: Record<string, string>; stackName?: string; config?: ConfigRewrite; sdks?: string } = {},
  ): ExampleProject {
    const runs = path.join(examplesDir, "runs");
    fs.mkdirSync(runs, { recursive: true });
    const dir = fs.mkdtempSync(path.join(runs, `${name}-`));
    copyTree(path.join(repoRoot, "examples", name), dir, (n) => n === "node_modules" || /^step\d+$/.test(n));
    const runtime = exampleRuntime(name);
    if (runtime === "nodejs") {
      fs.symlinkSync(path.join(examplesDir, "node_modules"), path.join(dir, "node_modules"));
    } else if (!options.sdks) {
      throw new Error(
        `examples/${name} is a ${runtime} program: give the consumer project of its plugin (sdks)`,
      );
    }
    const env = { ...options.env, ...(runtime === "python" && { PYTHONPATH: pythonSdk(options.sdks!) }) };
    const harness = Harness.forProject(examplesDir, dir, { ...options, env });
    if (runtime !== "nodejs") installPlugin(harness, options.sdks!);
    const project = new ExampleProject(name, dir, harness, options.config);
    project.rewriteConfig();
    return project;
  }

  /** The example's change steps (`step2`, `step3`, …), in order. */
  steps(): string[] {
    const src = path.join(repoRoot, "examples", this.name);
    return fs
      .readdirSync(src)
      .filter((d) => /^step\d+$/.test(d))
      .sort((a, b) => Number(a.slice(4)) - Number(b.slice(4)));
  }

  /** True when a step changes this project's stack: it has program files or the stack's config. */
  stepChanges(step: string): boolean {
    const files = fs.readdirSync(path.join(repoRoot, "examples", this.name, step));
    const program = (f: string) => f.endsWith(".ts") || f.endsWith(".py") || f === "Pulumi.yaml";
    return files.some((f) => program(f) || f === `Pulumi.${this.harness.stackName}.yaml`);
  }

  /** Copies a step's files over the project, as a user editing the program would. */
  applyStep(step: string): void {
    copyTree(path.join(repoRoot, "examples", this.name, step), this.dir, () => false);
    this.rewriteConfig();
  }

  /** Removes the folder. */
  dispose(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
