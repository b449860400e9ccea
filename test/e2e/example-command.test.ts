// A user's first minutes from a checkout, run as the docs say, with the real Pulumi CLI and
// engine: `npm run example -- <name> <dir>` then `cd <dir> && pulumi stack init dev && pulumi
// preview` (docs/CONTRIBUTING.md's lines, run by bash), and each example README's `pulumi new` line — run
// as written on an example whose dependency points at the packed tarball (what a published version
// gives everyone else), and for every example with `--generate-only`, where the project it makes
// must own the config keys the example ships.
import { loadYaml } from "@kubernetes/client-node";
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/harness";
import { exampleNames } from "../support/example-project";
import { repoRoot } from "../../scripts/consumer.mjs";

const exec = promisify(execFile);

/** The lines of the first `sh` block of a Markdown file that contains `marker`. */
function shBlock(file: string, marker: string): string[] {
  const blocks = [...fs.readFileSync(file, "utf8").matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const block = blocks.find((b) => b.includes(marker));
  if (!block) throw new Error(`${path.relative(repoRoot, file)} has no sh block with ${marker}`);
  return block.trimEnd().split("\n");
}

/** A README's `pulumi new` line, without its comment. */
function pulumiNewLine(name: string): string {
  const file = path.join(repoRoot, "examples", name, "README.md");
  const line = shBlock(file, "pulumi new").find((l) => l.startsWith("pulumi new "))!;
  return line.replace(/\s+#.*$/, "");
}

/** Examples whose README starts them with `pulumi new` (migrate-from-operator starts from `import`). */
const newable = exampleNames().filter((n) =>
  fs.readFileSync(path.join(repoRoot, "examples", n, "README.md"), "utf8").includes("\npulumi new "),
);

const readYaml = (file: string) => loadYaml(fs.readFileSync(file, "utf8")) as Record<string, unknown>;

describe("starting from an example", () => {
  /** A user's environment with a file:// backend of its own (stacks of one project and name differ). */
  const userEnv = () => ({
    ...process.env,
    PULUMI_BACKEND_URL: `file://${tempDir("example-backend")}`,
    PULUMI_CONFIG_PASSPHRASE: "example",
    PULUMI_HOME: tempDir("example-home"),
  });
  const env = userEnv();
  /** Runs shell lines as a user types them, one bash script, stopping at the first failure. */
  const shell = (lines: string[], cwd: string, withEnv = env) =>
    exec("bash", ["-euo", "pipefail", "-c", lines.join("\n")], { cwd, env: withEnv, maxBuffer: 16 << 20 });
  const pulumi = (args: string[], cwd: string, withEnv = env) =>
    exec("pulumi", [...args, "--non-interactive"], { cwd, env: withEnv, maxBuffer: 16 << 20 });
  const previewed = async (cwd: string, withEnv = env) => (await pulumi(["preview"], cwd, withEnv)).stdout;
  const projects: Record<string, string> = {};

  it.each([
    ["quickstart", /\+ 6 to create/],
    ["egress-ips", /to create/],
  ])(
    "CONTRIBUTING (from a checkout): npm run example -- %s <dir>, then cd <dir> && pulumi stack init dev && pulumi preview",
    async (name, summary) => {
      const dir = path.join(tempDir(`example-${name}`), "proj");
      // The lines docs/CONTRIBUTING.md gives for the quickstart from a checkout, for this example and folder.
      const lines = shBlock(path.join(repoRoot, "docs", "CONTRIBUTING.md"), "npm run example").map((l) =>
        l.replaceAll("~/egress-demo", dir).replaceAll("quickstart", name),
      );
      expect(lines[0]).toMatch(/^npm run example -- /);
      const ran = await shell(lines, repoRoot);
      expect(ran.stdout).toContain(`example ${name} is ready in ${dir}`);
      // The pulumi on PATH (this checkout's .tools/bin here) is supported: nothing is built.
      expect(ran.stderr).toMatch(/example: using \S+\/pulumi v[\d.]+ from PATH/);
      expect(ran.stderr).not.toContain("building the Pulumi CLI");
      expect(ran.stdout).toMatch(summary);
      const manifest = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
      expect(manifest.dependencies["pulumi-egress-ipam"]).toMatch(
        /^file:\.\/pulumi-egress-ipam-[\d.]+\.tgz$/,
      );
      expect(fs.existsSync(path.join(dir, "node_modules", "pulumi-egress-ipam", "dist", "index.js"))).toBe(
        true,
      );
      expect(fs.existsSync(path.join(dir, "node_modules", "typescript"))).toBe(true); // the devDependency
      projects[name] = dir;
    },
  );

  it("the README's pulumi new is the quickstart README's", () => {
    const readme = shBlock(path.join(repoRoot, "README.md"), "pulumi new")[0]!.replace(
      "~/egress-demo",
      "<dir>",
    );
    expect(readme).toBe(pulumiNewLine("quickstart"));
  });

  it.each(["quickstart", "egress-ips"])(
    "README of %s: its pulumi new line as written, the dependency a published version would satisfy pointed at the packed tarball, makes a project that previews",
    async (name) => {
      const made = projects.quickstart;
      expect(made, "the quickstart project of the tests before").toBeDefined();
      const tarball = path.join(
        made!,
        fs.readdirSync(made!).find((f) => f.endsWith(".tgz"))!,
      );
      // A checkout whose example depends on the tarball: `$PWD/examples/<name>` in the line is it.
      const root = tempDir("example-checkout");
      const template = path.join(root, "examples", name);
      fs.cpSync(path.join(repoRoot, "examples", name), template, {
        recursive: true,
        filter: (src) => !["node_modules", "package-lock.json"].includes(path.basename(src)),
      });
      const manifestFile = path.join(template, "package.json");
      const manifest = JSON.parse(fs.readFileSync(manifestFile, "utf8"));
      manifest.dependencies["pulumi-egress-ipam"] = `file:${tarball}`;
      fs.writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));

      const dir = path.join(tempDir(`example-new-${name}`), "proj");
      const line = pulumiNewLine(name).replaceAll("<dir>", dir);
      const own = userEnv();
      const created = await shell([`${line} --yes --non-interactive`], root, own);
      expect(created.stdout).toContain("Finished installing dependencies");
      const project = readYaml(path.join(dir, "Pulumi.yaml")).name;
      expect(project).toBe(readYaml(path.join(repoRoot, "examples", name, "Pulumi.yaml")).name);
      // The stack the line names exists, and is the only one: the README runs no stack init for it.
      const stacks = JSON.parse((await pulumi(["stack", "ls", "--json"], dir, own)).stdout) as {
        name: string;
      }[];
      expect(stacks.map((s) => s.name)).toEqual([/--stack (\S+)/.exec(line)![1]]);
      expect(await previewed(dir, own)).toMatch(name === "quickstart" ? /\+ 6 to create/ : /to create/);
    },
  );

  it.each(newable)(
    "README of %s: its pulumi new line (--generate-only) makes the project whose config keys the example ships, for a stack it ships settings of",
    async (name) => {
      const dir = path.join(tempDir(`example-gen-${name}`), "proj");
      const line = pulumiNewLine(name).replaceAll("<dir>", dir);
      // The dependency is not published yet: generate the files, install nothing, make no stack.
      await shell([`${line} --generate-only --yes --non-interactive`], repoRoot, userEnv());
      const project = readYaml(path.join(dir, "Pulumi.yaml")).name as string;
      const stack = /--stack (\S+)/.exec(line)?.[1];
      expect(stack, "the line names the stack").toBeDefined();
      expect(fs.existsSync(path.join(dir, `Pulumi.${stack}.yaml`)), `Pulumi.${stack}.yaml`).toBe(true);
      for (const file of fs.readdirSync(dir).filter((f) => /^Pulumi\..+\.yaml$/.test(f))) {
        const keys = Object.keys((readYaml(path.join(dir, file)).config ?? {}) as Record<string, unknown>);
        // The program reads its own namespace (`new pulumi.Config()`); `aws:` is the AWS provider's.
        const foreign = keys.filter((k) => !k.startsWith(`${project}:`) && !k.startsWith("aws:"));
        expect(foreign, `${file}: keys outside project ${project}`).toEqual([]);
      }
      // No `pulumi stack init` of the stack `pulumi new --stack` already made.
      const commands = shBlock(path.join(repoRoot, "examples", name, "README.md"), "pulumi new").map((l) =>
        l.replace(/#.*$/, ""),
      );
      expect(commands.join("\n")).not.toMatch(new RegExp(`pulumi stack init ${stack}\\b`));
    },
  );

  it("a linked package (npm link, a workspace symlink) is named at preview: its providers are stored by value", async () => {
    const made = projects.quickstart!;
    const linked = path.join(tempDir("example-linked"), "proj");
    fs.cpSync(made, linked, { recursive: true, verbatimSymlinks: true });
    const installed = path.join(linked, "node_modules", "pulumi-egress-ipam");
    fs.rmSync(installed, { recursive: true, force: true });
    // What `npm link pulumi-egress-ipam` leaves: a symlink to the checkout (built by the e2e setup).
    fs.symlinkSync(repoRoot, installed);
    await pulumi(["stack", "init", "linked"], linked);
    const { stdout } = await pulumi(["preview"], linked);
    expect(stdout).toMatch(/providers are stored in state by value \(\d+ bytes/);
    // Once per deployment (shown inline and again under Diagnostics), not once per resource or kind.
    expect(stdout.match(/stored in state by value/g)?.length).toBeLessThanOrEqual(2);
    // Installed from the tarball, as in the projects above: no such warning.
    expect(await previewed(made)).not.toContain("stored in state by value");
  });
});
