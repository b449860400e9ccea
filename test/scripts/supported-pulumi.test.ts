// Which Pulumi CLI `npm run example` uses: the rule (a table), and the choice of the `pulumi` on
// PATH, made with fake CLIs that print a version.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { choosePulumi, pulumiSupport, sdkVersion } from "../../scripts/supported-pulumi.mjs";

const root = path.resolve(__dirname, "..", "..");

describe("pulumiSupport: same major as the SDK, and not older", () => {
  it.each([
    ["v3.276.0", "3.276.0", true], // what setup builds
    ["3.276.0", "3.276.0", true],
    ["v3.276.1", "3.276.0", true],
    ["v3.300.0", "3.276.0", true],
    ["v3.277.0-alpha.1733+g1a2b3c", "3.276.0", true], // a dev build of a later release
    ["v3.276.0-alpha.1+dirty", "3.276.0", false], // a pre-release comes before its release
    ["v3.275.9", "3.276.0", false],
    ["v3.99.0", "3.276.0", false],
    ["v2.300.0", "3.276.0", false],
    ["v4.0.0", "3.276.0", false], // another major: another engine protocol
    ["v4.1.0", "4.0.5", true],
    ["", "3.276.0", false],
    ["pulumi version unknown", "3.276.0", false],
  ])("CLI %j on SDK %s: supported %s", (cli, sdk, supported) => {
    expect(pulumiSupport(cli, sdk).supported).toBe(supported);
  });

  it("says why a CLI is not supported", () => {
    expect(pulumiSupport("v3.100.0", "3.276.0").reason).toBe(
      "older than 3.276.0, needs 3.x at 3.276.0 or newer (the @pulumi/pulumi of this checkout)",
    );
    expect(pulumiSupport("v4.0.0", "3.276.0").reason).toMatch(/^major version 4, needs 3\.x/);
  });

  it("is asked about this checkout's SDK: the installed @pulumi/pulumi", () => {
    const installed = JSON.parse(
      fs.readFileSync(path.join(root, "node_modules", "@pulumi", "pulumi", "package.json"), "utf8"),
    );
    expect(sdkVersion()).toBe(installed.version);
  });
});

describe("choosePulumi: the first pulumi on PATH", () => {
  const sdk = "3.276.0";
  /** A folder holding a fake `pulumi` whose `version` prints `output` (and exits `code`). */
  const fakeCli = (output: string, code = 0) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fake-pulumi-"));
    const script = `#!/bin/sh\n[ "$1" = version ] && { echo '${output}'; exit ${code}; }\nexit 9\n`;
    fs.writeFileSync(path.join(dir, "pulumi"), script, { mode: 0o755 });
    return dir;
  };
  const pathOf = (...dirs: string[]) => [...dirs, "/usr/bin", "/bin"].join(path.delimiter);

  it.each([
    ["v3.276.0", true],
    ["v3.290.2", true],
    ["v3.200.0", false],
    ["v4.0.0", false],
  ])("a pulumi printing %s: supported %s", (version, supported) => {
    const dir = fakeCli(version);
    expect(choosePulumi({ PATH: pathOf(dir) }, sdk)).toMatchObject({
      file: path.join(dir, "pulumi"),
      version,
      supported,
    });
  });

  it("takes the first one on PATH, as the shell would", () => {
    const old = fakeCli("v3.100.0");
    const current = fakeCli("v3.280.0");
    expect(choosePulumi({ PATH: pathOf(old, current) }, sdk).supported).toBe(false);
    expect(choosePulumi({ PATH: pathOf(current, old) }, sdk).supported).toBe(true);
  });

  it("does not use a pulumi whose version command fails, or none at all", () => {
    expect(choosePulumi({ PATH: pathOf(fakeCli("v3.276.0", 1)) }, sdk)).toMatchObject({
      supported: false,
      reason: expect.stringMatching(/version failed$/),
    });
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), "no-pulumi-"));
    expect(choosePulumi({ PATH: empty }, sdk)).toEqual({ supported: false, reason: "no pulumi on PATH" });
  });

  it("as scripts/example.sh runs it: exit 0 to use the one on PATH, 1 to build one", () => {
    const run = (dir: string) =>
      spawnSync(process.execPath, [path.join(root, "scripts", "supported-pulumi.mjs")], {
        env: { PATH: pathOf(dir) },
        encoding: "utf8",
      });
    const installed = sdkVersion();
    const good = run(fakeCli(`v${installed}`));
    expect(good.status, good.stderr).toBe(0);
    expect(good.stderr).toMatch(/^example: using \S+\/pulumi v[\d.]+ from PATH/);
    const old = run(fakeCli("v3.1.0"));
    expect(old.status).toBe(1);
    expect(old.stderr).toMatch(/not using \S+\/pulumi v3\.1\.0 \(older than .*\); building the Pulumi CLI/);
  });
});
