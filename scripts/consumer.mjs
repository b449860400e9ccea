// The consumer project: this package installed from its packed tarball, the way users get it.
// Shared by the end-to-end tests and the demo.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";

/** Repository root. */
export const repoRoot = path.resolve(import.meta.dirname, "..");

const run = (cmd, args, cwd) =>
  execFileSync(cmd, args, { cwd, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });

/**
 * Builds `dist/` afresh from this checkout (an earlier build's output of a module since moved or
 * removed would be packed too) and packs it with `npm pack` into `destination` (made when
 * missing), as npm would publish it; the package's own scripts are not run (prepack would build
 * again). Returns the tarball's path.
 */
export function packPackage(destination) {
  fs.rmSync(path.join(repoRoot, "dist"), { recursive: true, force: true });
  run("tsc", ["-p", "tsconfig.build.json"], repoRoot);
  fs.mkdirSync(destination, { recursive: true });
  const args = ["pack", "--silent", "--ignore-scripts", "--pack-destination", destination];
  return path.join(destination, run("npm", args, repoRoot).trim());
}

/**
 * Builds `dist/`, packs it with `npm pack` and installs the tarball into a consumer project, with
 * `@pulumi/pulumi` and `typescript` at this repository's versions and `extraDependencies` (name →
 * version). The project is cached under `.tools/<name>/<sha of the tarball and dependencies>`, so
 * a run after an unchanged build installs nothing. Returns the project's directory.
 */
export function prepareConsumerProject({ name = "consumer", extraDependencies = {} } = {}) {
  const packDir = path.join(repoRoot, ".tools", "pack", String(process.pid)); // one per concurrent run
  fs.rmSync(packDir, { recursive: true, force: true });
  const tarball = packPackage(packDir);
  const own = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8"));
  const dependencies = {
    "pulumi-egress-ipam": "file:./pulumi-egress-ipam.tgz",
    "@pulumi/pulumi": own.devDependencies["@pulumi/pulumi"],
    // Pulumi's closure serializer and its TypeScript programs need it.
    typescript: own.devDependencies.typescript,
    ...extraDependencies,
  };
  const sha = createHash("sha256")
    .update(fs.readFileSync(tarball))
    .update(JSON.stringify(dependencies))
    .digest("hex")
    .slice(0, 16);
  const parent = path.join(repoRoot, ".tools", name);
  const dir = path.join(parent, sha);
  if (fs.existsSync(path.join(dir, ".installed"))) return dir;

  // Installs of earlier builds go once nobody can be using them any more; concurrent test runs may
  // install the same build at once, so each installs in a folder of its own and renames it.
  fs.mkdirSync(parent, { recursive: true });
  for (const old of fs.readdirSync(parent)) {
    const stale = Date.now() - fs.statSync(path.join(parent, old)).mtimeMs > 3_600_000;
    if (old !== sha && stale) fs.rmSync(path.join(parent, old), { recursive: true, force: true });
  }
  const tmp = `${dir}.${process.pid}.tmp`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  fs.copyFileSync(tarball, path.join(tmp, "pulumi-egress-ipam.tgz"));
  const manifest = { name, private: true, dependencies };
  fs.writeFileSync(path.join(tmp, "package.json"), JSON.stringify(manifest, null, 2));
  run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], tmp);
  fs.writeFileSync(path.join(tmp, ".installed"), sha);
  try {
    fs.renameSync(tmp, dir);
  } catch (err) {
    if (fs.existsSync(path.join(dir, ".installed"))) {
      fs.rmSync(tmp, { recursive: true, force: true }); // another run finished the same install first
      return dir;
    }
    if (!fs.existsSync(dir)) throw err;
    // A folder of this name that is no install: what a test run recreated (its `runs`) after the
    // install it used was removed as stale. Nothing can be using it as an install: replaced.
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
  }
  return dir;
}

/**
 * Turns an example's `index.ts` into an inline program for the Automation API: the file is
 * transpiled as-is and its imports resolve from the consumer project, as they would in a user's
 * project, except the modules named in `standIns` (name → module), which tests answer themselves.
 * The program returns the module's exports, which become stack outputs.
 */
export function exampleProgram(file, consumerDir, standIns = {}) {
  const consumerRequire = createRequire(path.join(consumerDir, "package.json"));
  const ts = consumerRequire("typescript");
  const source = fs.readFileSync(file, "utf8");
  const js = ts.transpileModule(source, {
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
    },
    fileName: file,
  }).outputText;
  return async () => {
    const module = { exports: {} };
    const load = (id) => (id in standIns ? standIns[id] : consumerRequire(id));
    new Function("require", "module", "exports", "__filename", "__dirname", js)(
      load,
      module,
      module.exports,
      file,
      path.dirname(file),
    );
    return module.exports;
  };
}
