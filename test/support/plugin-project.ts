// Pulumi projects in languages other than TypeScript, using this package through its plugin as a
// user would: the plugin tarball `npm run sdks` builds, installed with `pulumi plugin install`
// into the project's PULUMI_HOME, and the CLI run in the project's folder with the language's host.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { repoRoot } from "../../scripts/consumer.mjs";
import { Harness } from "./harness";

const version = (
  JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { version: string }
).version;

/**
 * The plugin tarball of this build (`npm run sdks -- plugin`), built once per build of the package:
 * kept under .tools/sdks/<the consumer project's key>, which changes with every change of the package.
 */
export function pluginTarball(consumerDir: string): string {
  const out = path.join(repoRoot, ".tools", "sdks", path.basename(consumerDir));
  const file = path.join(out, `pulumi-resource-egress-ipam-v${version}-linux-x64.tar.gz`);
  if (!fs.existsSync(file)) {
    execFileSync("bash", [path.join(repoRoot, "scripts/sdks.sh"), "plugin"], {
      env: { ...process.env, SDKS_OUT: out },
      stdio: ["ignore", "ignore", "pipe"],
    });
  }
  return file;
}

/**
 * A project folder with `files` (its `Pulumi.yaml` among them) in the consumer project's runs,
 * the plugin installed into its PULUMI_HOME, and a harness running the CLI there.
 */
export function pluginProject(
  consumerDir: string,
  name: string,
  files: Record<string, string>,
  options: { env?: Record<string, string>; stackName?: string } = {},
): Harness {
  const runs = path.join(consumerDir, "runs");
  fs.mkdirSync(runs, { recursive: true });
  const dir = fs.mkdtempSync(path.join(runs, `${name}-`));
  for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), text);
  const harness = Harness.forProject(consumerDir, dir, options);
  installPlugin(harness, consumerDir);
  return harness;
}

/**
 * Installs the plugin of this build (see {@link pluginTarball}) into the harness's PULUMI_HOME, as a
 * user does with `pulumi plugin install resource egress-ipam <version> -f <tarball>`.
 */
export function installPlugin(harness: Harness, consumerDir: string): void {
  execFileSync(
    "pulumi",
    ["plugin", "install", "resource", "egress-ipam", version, "-f", pluginTarball(consumerDir)],
    {
      env: { ...process.env, ...harness.env },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
}

/** Replaces the project's file `file` (a change of the program between two operations). */
export function writeProjectFile(harness: Harness, file: string, text: string): void {
  fs.writeFileSync(path.join(harness.workDir, file), text);
}

/**
 * The Python SDK of this build (`npm run sdks -- python`: generated from the plugin's schema and
 * built into a wheel), installed into a folder of its own, once per build: a program finds it on
 * PYTHONPATH, as it would in its virtualenv after `pip install` of the wheel.
 */
export function pythonSdk(consumerDir: string): string {
  const out = path.join(repoRoot, ".tools", "sdks", path.basename(consumerDir));
  const site = path.join(out, "python-site");
  if (!fs.existsSync(path.join(site, "pulumi_egress_ipam"))) {
    execFileSync("bash", [path.join(repoRoot, "scripts/sdks.sh"), "python"], {
      env: { ...process.env, SDKS_OUT: out },
      stdio: ["ignore", "ignore", "pipe"],
    });
    const wheel = fs.readdirSync(path.join(out, "python", "dist")).find((f) => f.endsWith(".whl"))!;
    const pip = path.join(pythonVenv(), "bin", "pip");
    execFileSync(
      pip,
      ["install", "--quiet", "--no-deps", "--target", `${site}.tmp`, path.join(out, "python", "dist", wheel)],
      {
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    fs.renameSync(`${site}.tmp`, site);
  }
  return site;
}

/** The venv with the pulumi Python SDK that scripts/setup-languages.sh makes in .tools. */
export function pythonVenv(): string {
  const venv = fs
    .readdirSync(path.join(repoRoot, ".tools"))
    .filter((d) => d.startsWith("python-pulumi-"))
    .sort()
    .at(-1);
  if (!venv) throw new Error("no Python venv in .tools: run scripts/setup-languages.sh");
  return path.join(repoRoot, ".tools", venv);
}

/**
 * The Go SDK of this build (`npm run sdks -- go`: the module `pulumi-egress-ipam/sdk/go`, generated
 * from the plugin's schema), made and compiled once per build; a program requires it and replaces
 * it with this folder.
 */
export function goSdk(consumerDir: string): string {
  const out = path.join(repoRoot, ".tools", "sdks", path.basename(consumerDir));
  if (!fs.existsSync(path.join(out, "go", "go.mod"))) {
    execFileSync("bash", [path.join(repoRoot, "scripts/sdks.sh"), "go"], {
      env: { ...process.env, SDKS_OUT: out },
      stdio: ["ignore", "ignore", "pipe"],
    });
    // Compiled once here: a program's first build (by the Go language host, inside a test) then
    // only compiles the program itself, not the Pulumi SDK under it (minutes from an empty cache).
    execFileSync("go", ["build", "./..."], {
      cwd: path.join(out, "go"),
      stdio: ["ignore", "ignore", "pipe"],
    });
  }
  return path.join(out, "go");
}
