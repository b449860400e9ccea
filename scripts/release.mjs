// `npm run release` (scripts/release.sh): everything a release publishes, in dist/release/, for the
// version in package.json, refused when CHANGELOG.md has no entry for it:
//   pulumi-egress-ipam-<version>.tgz                          the npm package (`npm pack`)
//   pulumi-resource-egress-ipam-v<version>-<os>-<arch>.tar.gz  the plugin, needing no Node.js, for
//       linux-amd64, linux-arm64, darwin-amd64, darwin-arm64 (Go's names, which the engine asks
//       for; scripts/release/plugin-sea.mjs)
//   schema.json                                               the plugin's schema, with pluginDownloadURL
//   pulumi_egress_ipam-<version>.tar.gz, …-py3-none-any.whl   the Python SDK, sdist and wheel
//   go/pulumi-egress-ipam/sdk/go@v<version>/                  the Go SDK module, as the module cache lays it out
//   SHA256SUMS                                                `sha256sum -c SHA256SUMS` checks all of it
// Options: --plugin-url <url> (or EGRESS_IPAM_PLUGIN_URL; required: where the plugin archives will be
// served, written into the schema and so into the SDKs), --out <dir>, --platforms <p,…>,
// --parts <npm,plugin,python,go>, --no-build (dist/ is built already); --version <v> and
// --changelog <file> release another version than package.json's (the upgrade test's 0.1.1).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { packPackage, repoRoot } from "./consumer.mjs";
import { missingEntry } from "./release/changelog.mjs";
import { bundlePlugin, platforms, pluginArchive, releaseTools, seaBlob } from "./release/plugin-sea.mjs";

const log = (text) => process.stderr.write(`release: ${text}\n`);
const own = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8"));
const { values: opts } = parseArgs({
  options: {
    "plugin-url": { type: "string", default: process.env.EGRESS_IPAM_PLUGIN_URL },
    out: { type: "string", default: path.join(repoRoot, "dist", "release") },
    platforms: { type: "string", default: Object.keys(platforms).join(",") },
    parts: { type: "string", default: "npm,plugin,python,go" },
    "no-build": { type: "boolean", default: false },
    version: { type: "string", default: own.version },
    changelog: { type: "string", default: path.join(repoRoot, "CHANGELOG.md") },
  },
});
const version = opts.version;
const parts = opts.parts.split(",");
const refusal = missingEntry(fs.readFileSync(opts.changelog, "utf8"), version);
if (refusal) {
  process.stderr.write(`${refusal}\n`);
  process.exit(1);
}
if (!opts["plugin-url"]) {
  log(
    "name where the plugin archives will be served, with --plugin-url <url> or EGRESS_IPAM_PLUGIN_URL " +
      "(an http(s) folder holding pulumi-resource-egress-ipam-v<version>-<os>-<arch>.tar.gz)",
  );
  process.exit(2);
}
const out = path.resolve(opts.out);
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });
const started = Date.now();
const took = () => `${((Date.now() - started) / 1000).toFixed(0)} s`;

// The schema of this release: the plugin serves it, and the SDKs generated from it ask the engine
// for this version from this URL.
const schema = {
  ...JSON.parse(fs.readFileSync(path.join(repoRoot, "provider", "plugin", "schema.json"), "utf8")),
  version,
  pluginDownloadURL: opts["plugin-url"],
};
const schemaFile = path.join(out, "schema.json");
fs.writeFileSync(schemaFile, `${JSON.stringify(schema, null, 2)}\n`);

if (parts.includes("npm")) {
  if (version !== own.version)
    throw new Error(`the npm package is package.json's ${own.version}, not ${version}`);
  const tarball = packPackage(out); // builds dist/ first
  log(`npm: ${path.basename(tarball)} (${took()})`);
} else if (!opts["no-build"]) {
  execFileSync("tsc", ["-p", "tsconfig.build.json"], { cwd: repoRoot, stdio: "inherit" });
}

if (parts.includes("plugin")) {
  releaseTools();
  const work = fs.mkdtempSync(path.join(repoRoot, ".tools", "release-bundle-"));
  try {
    const script = path.join(work, "plugin.js");
    await bundlePlugin(schema, script);
    const blob = path.join(work, "plugin.blob");
    seaBlob(script, blob);
    log(`plugin bundled: ${(fs.statSync(script).size / 1e6).toFixed(1)} MB of script (${took()})`);
    for (const platform of opts.platforms.split(",")) {
      const archive = await pluginArchive({ version, platform, blobFile: blob, outDir: out });
      log(
        `plugin: ${path.basename(archive)}, ${(fs.statSync(archive).size / 1e6).toFixed(1)} MB (${took()})`,
      );
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (parts.includes("python") || parts.includes("go")) {
  const sdks = fs.mkdtempSync(path.join(repoRoot, ".tools", "release-sdks-"));
  try {
    const langs = ["python", "go"].filter((l) => parts.includes(l));
    execFileSync("bash", [path.join(repoRoot, "scripts", "sdks.sh"), ...langs], {
      env: { ...process.env, SDKS_OUT: sdks, SDKS_SCHEMA: schemaFile, SDKS_SETUP_DONE: "1" },
      stdio: ["ignore", "inherit", "inherit"],
    });
    if (langs.includes("python")) {
      const dir = path.join(sdks, "python");
      // The sdist, from the same sources with the build backend the wheel was built with.
      execFileSync(venvPython(), ["-c", "from setuptools import build_meta as b; b.build_sdist('dist')"], {
        cwd: dir,
        stdio: ["ignore", "ignore", "inherit"],
      });
      for (const file of fs.readdirSync(path.join(dir, "dist"))) {
        fs.copyFileSync(path.join(dir, "dist", file), path.join(out, file));
        log(`python: ${file} (${took()})`);
      }
    }
    if (langs.includes("go")) {
      const module = fs.readFileSync(path.join(sdks, "go", "go.mod"), "utf8").match(/^module (\S+)/m)[1];
      const dest = path.join(out, "go", `${module}@v${version}`);
      fs.mkdirSync(path.dirname(dest), { recursive: true });
      fs.cpSync(path.join(sdks, "go"), dest, { recursive: true });
      log(`go: ${path.relative(out, dest)} (${took()})`);
    }
  } finally {
    fs.rmSync(sdks, { recursive: true, force: true });
  }
}

/** The python of the venv scripts/setup-languages.sh makes (with setuptools), as sdks.sh picks it. */
function venvPython() {
  const tools = path.join(repoRoot, ".tools");
  const venv = fs
    .readdirSync(tools)
    .filter((d) => d.startsWith("python-pulumi-"))
    .sort()
    .at(-1);
  return venv ? path.join(tools, venv, "bin", "python3") : "python3";
}

// Checksums of every file, in `sha256sum` form, paths relative to the release folder.
const files = fs
  .readdirSync(out, { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile())
  .map((e) => path.relative(out, path.join(e.parentPath, e.name)))
  .sort();
const sums = files.map(
  (f) =>
    `${createHash("sha256")
      .update(fs.readFileSync(path.join(out, f)))
      .digest("hex")}  ${f}`,
);
fs.writeFileSync(path.join(out, "SHA256SUMS"), `${sums.join("\n")}\n`);
log(`${files.length} files and SHA256SUMS in ${out} (${took()})`);
