// `npm run example -- <name> <dir>`: makes examples/<name> a working Pulumi project in <dir> on this
// checkout's code, as a user would start one before (or without) a published version: builds and
// packs the package, copies the example, points its dependency at the packed tarball (kept in the
// project, so it stays self-contained), and installs. Then `cd <dir>`, `pulumi stack init dev`,
// `pulumi preview`. scripts/example.sh runs it, with the toolchain it needs.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { packPackage, repoRoot as root } from "./consumer.mjs";

const examples = fs
  .readdirSync(path.join(root, "examples"), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

function fail(message) {
  process.stderr.write(`example: ${message}\n`);
  process.exit(2);
}

const [name, target] = process.argv.slice(2);
if (!name || !target) fail(`usage: npm run example -- <name> <dir>; examples: ${examples.join(", ")}`);
if (!examples.includes(name)) fail(`no example "${name}"; examples: ${examples.join(", ")}`);
// npm runs scripts from the package root; INIT_CWD is where the user ran npm.
const dir = path.resolve(process.env.INIT_CWD ?? process.cwd(), target);
if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0)
  fail(`${dir} exists and is not empty: give a new folder`);

const run = (cmd, args, cwd) =>
  execFileSync(cmd, args, { cwd, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });

// The example's files (not what an earlier local install left in the checkout).
const skip = new Set(["node_modules", "package-lock.json"]);
fs.cpSync(path.join(root, "examples", name), dir, {
  recursive: true,
  filter: (src) => !skip.has(path.basename(src)),
});

const packed = path.basename(packPackage(dir));
const manifestFile = path.join(dir, "package.json");
const manifest = JSON.parse(fs.readFileSync(manifestFile, "utf8"));
if (!manifest.dependencies?.["pulumi-egress-ipam"])
  fail(`examples/${name}/package.json does not depend on pulumi-egress-ipam`);
manifest.dependencies["pulumi-egress-ipam"] = `file:./${packed}`;
fs.writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], dir);

// scripts/example.sh says which Pulumi CLI to use: the one on PATH, or the one it built in .tools/.
const pulumiNote =
  process.env.EGRESS_IPAM_EXAMPLE_PULUMI === "tools"
    ? `(no supported pulumi on PATH: use the one built here, export PATH=${path.join(root, ".tools", "bin")}:$PATH)\n`
    : "";
process.stdout.write(
  `example ${name} is ready in ${dir}, on this checkout's code (${packed}).\n` +
    `next: cd ${dir} && pulumi stack init dev && pulumi preview\n` +
    pulumiNote +
    `(see its README for the config it needs; run npm run example again after changing the package)\n`,
);
