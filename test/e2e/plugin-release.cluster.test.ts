// The release's plugin as a user meets it (issue #58): its archive served over HTTP, fetched by the
// engine itself from the `pluginDownloadURL` a YAML program names, into a Pulumi home that has no
// plugin, and run with no `node` anywhere on PATH (the archive's executable carries its Node.js);
// `pulumi plugin install --server` fetches it the same way; and a 0.1.1 built by the same command
// is the plugin the engine runs once the program asks for it. In the `cluster` project only for
// its builds (the YAML language host): it uses no cluster.
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../scripts/consumer.mjs";

const exec = promisify(execFile);
const version = (
  JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { version: string }
).version;
const upgrade = version.replace(/\d+$/, (patch) => String(Number(patch) + 1));
const work = fs.mkdtempSync(path.join(os.tmpdir(), "plugin-release-"));
const served = path.join(work, "served");

/** The release command, building only the linux-amd64 plugin archive (what this machine runs). */
const release = (...args: string[]) =>
  exec(
    process.execPath,
    [
      path.join(repoRoot, "scripts", "release.mjs"),
      "--parts",
      "plugin",
      "--platforms",
      "linux-amd64",
      "--no-build",
      ...args,
    ],
    { cwd: repoRoot, maxBuffer: 64 << 20 },
  );

/** A static file server for `served` on 127.0.0.1, as a plugin's download URL is served. */
function serve(): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const file = path.join(served, path.basename(decodeURIComponent(new URL(req.url!, "http://x").pathname)));
    if (!fs.existsSync(file)) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/gzip", "content-length": fs.statSync(file).size });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the plugin server did not listen within 10 s")), 10_000);
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      clearTimeout(timer);
      resolve(server);
    });
  });
}

// PATH for the engine: the Pulumi CLI (beside which the engine finds its YAML language host), and
// no other folder, so no `node` can be found.
const bin = path.join(work, "bin");
fs.mkdirSync(bin);
fs.symlinkSync(fs.realpathSync(path.join(repoRoot, ".tools", "bin", "pulumi")), path.join(bin, "pulumi"));

/** The environment of a user with a fresh Pulumi home `home`; automatic plugin acquisition on. */
function userEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: bin,
    HOME: work,
    PULUMI_HOME: home,
    PULUMI_BACKEND_URL: `file://${path.join(work, "backend")}`,
    PULUMI_CONFIG_PASSPHRASE: "test",
    PULUMI_SKIP_UPDATE_CHECK: "true",
  };
}

const pulumi = (args: string[], cwd: string, env: NodeJS.ProcessEnv) =>
  exec(path.join(bin, "pulumi"), [...args, "--non-interactive"], { cwd, env, maxBuffer: 64 << 20 });

/** The YAML program: a pool and an allocation, asking for plugin `pluginVersion` from `url`. */
const program = (url: string, pluginVersion: string) => {
  const options = `    options: { version: ${pluginVersion}, pluginDownloadURL: "${url}" }\n`;
  return (
    "name: release-yaml\nruntime: yaml\nresources:\n" +
    "  pool:\n    type: egress-ipam:IpPool\n" +
    "    properties:\n      ranges: [{ subnet: 10.0.8.0/24, rangeStart: 10.0.8.10 }]\n" +
    options +
    "  web:\n    type: egress-ipam:IpAllocation\n    properties:\n      pool: ${pool}\n" +
    options +
    "outputs:\n  webIp: ${web.ip}\n"
  );
};

describe("the release's plugin archive, from a download server", () => {
  let server: http.Server;
  let url = "";
  const project = path.join(work, "project");
  const home = path.join(work, "home");

  beforeAll(async () => {
    server = await serve();
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const started = Date.now();
    await release("--plugin-url", url, "--out", served);
    console.log(`release of the linux-amd64 plugin archive: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    fs.mkdirSync(project);
    fs.mkdirSync(path.join(work, "backend"));
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("is fetched by the engine from pluginDownloadURL and runs with no node on PATH", async () => {
    const env = userEnv(home);
    for (const dir of env.PATH!.split(path.delimiter))
      expect(fs.existsSync(path.join(dir, "node"))).toBe(false);
    fs.writeFileSync(path.join(project, "Pulumi.yaml"), program(url, version));
    await pulumi(["stack", "init", "dev"], project, env);
    await pulumi(["up", "--yes"], project, env);
    const plugin = path.join(
      home,
      "plugins",
      `resource-egress-ipam-v${version}`,
      "pulumi-resource-egress-ipam",
    );
    expect(fs.existsSync(plugin)).toBe(true);
    const { stdout } = await pulumi(["stack", "output", "webIp"], project, env);
    expect(stdout.trim()).toBe("10.0.8.10");
  });

  it("installs with pulumi plugin install --server", async () => {
    const env = userEnv(path.join(work, "home-install"));
    await pulumi(["plugin", "install", "resource", "egress-ipam", version, "--server", url], work, env);
    const { stdout } = await pulumi(["plugin", "ls", "--json"], work, env);
    const plugins = JSON.parse(stdout) as { name: string; kind: string; version: string }[];
    expect(plugins.map((p) => `${p.kind} ${p.name} ${p.version}`)).toContain(
      `resource egress-ipam ${version}`,
    );
  });

  it(`is upgraded: a ${upgrade} built by the same command is the one the engine runs`, async () => {
    const changelog = path.join(work, "CHANGELOG.md");
    const own = fs.readFileSync(path.join(repoRoot, "CHANGELOG.md"), "utf8");
    fs.writeFileSync(
      changelog,
      own.replace(/^## /m, `## ${upgrade}\n\n- The upgrade test's release.\n\n## `),
    );
    await release(
      "--plugin-url",
      url,
      "--out",
      path.join(work, "upgrade"),
      "--version",
      upgrade,
      "--changelog",
      changelog,
    );
    const archive = `pulumi-resource-egress-ipam-v${upgrade}-linux-amd64.tar.gz`;
    fs.copyFileSync(path.join(work, "upgrade", archive), path.join(served, archive));

    const env = userEnv(home);
    fs.writeFileSync(path.join(project, "Pulumi.yaml"), program(url, upgrade));
    await pulumi(["up", "--yes"], project, env);
    expect(fs.existsSync(path.join(home, "plugins", `resource-egress-ipam-v${upgrade}`))).toBe(true);
    // The schema the YAML host got from the plugin it ran (the engine caches it by version) is the
    // new build's: the 0.1.0 binary would have answered with its own version.
    const plugins = path.join(home, "plugins");
    const cached = fs.readdirSync(plugins).filter((f) => f.startsWith(`schema-egress-ipam-${upgrade}`));
    expect(cached).toHaveLength(1);
    const schema = JSON.parse(fs.readFileSync(path.join(plugins, cached[0]!), "utf8")) as { version: string };
    expect(schema.version).toBe(upgrade);
    const { stdout } = await pulumi(["stack", "export"], project, env);
    const state = JSON.parse(stdout) as {
      deployment: { resources: { type: string; inputs?: { version?: string }; outputs?: { ip?: string } }[] };
    };
    const providers = state.deployment.resources.filter((r) => r.type === "pulumi:providers:egress-ipam");
    expect(providers.map((p) => p.inputs?.version)).toEqual([upgrade]);
    // The address the earlier plugin gave is kept by the new one.
    const web = state.deployment.resources.find((r) => r.type === "egress-ipam:index:IpAllocation");
    expect(web?.outputs?.ip).toBe("10.0.8.10");
  });
});
