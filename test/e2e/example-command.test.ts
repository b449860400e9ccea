// A user's first minutes from a checkout, run as the README says, with the real Pulumi CLI and
// engine: `npm run example -- <name> <dir>` makes an example a project on the checkout's code
// (previewed here for two examples), and `pulumi new` on an example folder works once its
// dependency points at a packed tarball (what a published version gives everyone else).
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/harness";
import { repoRoot } from "../../scripts/consumer.mjs";

const exec = promisify(execFile);

describe("starting from an example", () => {
  const backend = tempDir("example-backend");
  const env = {
    ...process.env,
    PULUMI_BACKEND_URL: `file://${backend}`,
    PULUMI_CONFIG_PASSPHRASE: "example",
    PULUMI_HOME: tempDir("example-home"),
  };
  const pulumi = (args: string[], cwd: string) =>
    exec("pulumi", [...args, "--non-interactive"], { cwd, env, maxBuffer: 16 << 20 });
  const previewed = async (cwd: string) => (await pulumi(["preview"], cwd)).stdout;
  const projects: string[] = [];

  it.each([
    ["quickstart", /\+ 6 to create/],
    ["egress-ips", /to create/],
  ])("npm run example -- %s <dir> gives a project that previews", async (name, summary) => {
    const dir = path.join(tempDir(`example-${name}`), "proj");
    // What the README says to run, from the checkout (npm runs it with the project's toolchain).
    const made = await exec("npm", ["run", "--silent", "example", "--", name, dir], {
      cwd: repoRoot,
      env,
      maxBuffer: 16 << 20,
    });
    expect(made.stdout).toContain(`example ${name} is ready in ${dir}`);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
    expect(manifest.dependencies["pulumi-egress-ipam"]).toMatch(/^file:\.\/pulumi-egress-ipam-[\d.]+\.tgz$/);
    expect(fs.existsSync(path.join(dir, "node_modules", "pulumi-egress-ipam", "dist", "index.js"))).toBe(
      true,
    );
    await pulumi(["stack", "init", `dev-${name}`], dir);
    // The example's own stack settings, for the stack name used here.
    const settings = path.join(dir, "Pulumi.dev.yaml");
    if (fs.existsSync(settings)) fs.copyFileSync(settings, path.join(dir, `Pulumi.dev-${name}.yaml`));
    expect(await previewed(dir)).toMatch(summary);
    projects.push(dir);
  });

  it("pulumi new on an example folder, its dependency overridden to the packed tarball, previews", async () => {
    const made = projects[0];
    expect(made, "the quickstart project of the test before").toBeDefined();
    const tarball = fs.readdirSync(made!).find((f) => f.endsWith(".tgz"))!;
    // The example folder as a template, as `pulumi new ./examples/quickstart` reads it, with the
    // dependency a published version would satisfy pointed at the tarball instead.
    const template = path.join(tempDir("example-template"), "quickstart");
    fs.cpSync(path.join(repoRoot, "examples", "quickstart"), template, {
      recursive: true,
      filter: (src) => !["node_modules", "package-lock.json"].includes(path.basename(src)),
    });
    const manifestFile = path.join(template, "package.json");
    const manifest = JSON.parse(fs.readFileSync(manifestFile, "utf8"));
    manifest.dependencies["pulumi-egress-ipam"] = `file:${path.join(made!, tarball)}`;
    fs.writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));
    const dir = path.join(tempDir("example-new"), "proj");
    const created = await pulumi(
      ["new", template, "--dir", dir, "--yes", "--stack", "dev", "--name", "quickstart-new"],
      path.dirname(dir),
    );
    expect(created.stdout).toContain("Finished installing dependencies");
    expect(await previewed(dir)).toMatch(/\+ 6 to create/);
  });

  it("a linked package (npm link, a workspace symlink) is named at preview: its providers are stored by value", async () => {
    const made = projects[0]!;
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
