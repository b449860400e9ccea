// Which Pulumi CLI `npm run example` leaves the user with: the one already on PATH when its version
// is supported, otherwise the one scripts/setup.sh builds into .tools/. Supported means the same
// major version as the @pulumi/pulumi SDK this checkout installs, and not older than it: the CLI
// runs the program's SDK, and an SDK newer than its CLI may ask the engine for what that CLI lacks.
// Run as a script it prints its decision on stderr and exits 0 (use the one on PATH) or 1.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";

const root = path.resolve(import.meta.dirname, "..");

/**
 * Parses `v3.276.0`, `3.276.0-alpha.1+g1a2b` and the like (the first line of `pulumi version`).
 * Returns undefined for anything else.
 */
export function parseVersion(text) {
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(text.trim());
  if (!m) return undefined;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), prerelease: m[4] ?? "" };
}

/** Negative, zero or positive as `a` is older than, the same release as or newer than `b`. */
function compare(a, b) {
  const byNumber = a.major - b.major || a.minor - b.minor || a.patch - b.patch;
  if (byNumber !== 0) return byNumber;
  // A pre-release comes before its release (3.276.0-alpha < 3.276.0); two pre-releases tie.
  return (a.prerelease ? -1 : 0) - (b.prerelease ? -1 : 0);
}

/**
 * Whether a Pulumi CLI of version `cli` (as `pulumi version` prints it) can run programs on the
 * @pulumi/pulumi SDK of version `sdk`: same major, and `cli` >= `sdk`. Returns the answer and a
 * sentence saying why.
 */
export function pulumiSupport(cli, sdk) {
  const want = parseVersion(sdk);
  if (!want) throw new Error(`@pulumi/pulumi version "${sdk}" is not a version`);
  const have = parseVersion(cli);
  if (!have) return { supported: false, reason: `"${cli}" is not a version` };
  const needed = `${want.major}.x at ${sdk} or newer (the @pulumi/pulumi of this checkout)`;
  if (have.major !== want.major)
    return { supported: false, reason: `major version ${have.major}, needs ${needed}` };
  if (compare(have, want) < 0) return { supported: false, reason: `older than ${sdk}, needs ${needed}` };
  return { supported: true, reason: `${needed}: yes` };
}

/** The @pulumi/pulumi version of this checkout: the installed one, else the one package.json pins. */
export function sdkVersion() {
  const installed = path.join(root, "node_modules", "@pulumi", "pulumi", "package.json");
  if (fs.existsSync(installed)) return JSON.parse(fs.readFileSync(installed, "utf8")).version;
  const own = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
  return own.devDependencies["@pulumi/pulumi"].replace(/^[\^~]/, "");
}

/** The first `pulumi` on `envPath`, or undefined. */
function onPath(envPath) {
  for (const dir of (envPath ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, "pulumi");
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * The decision for the `pulumi` first on `env.PATH`: its path and version (when it has one) and
 * {@link pulumiSupport}'s answer for this checkout's SDK.
 */
export function choosePulumi(env = process.env, sdk = sdkVersion()) {
  const file = onPath(env.PATH);
  if (!file) return { supported: false, reason: "no pulumi on PATH" };
  let version;
  try {
    const out = execFileSync(file, ["version"], {
      env,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    version = out.trim().split("\n")[0] ?? "";
  } catch {
    return { file, supported: false, reason: `${file} version failed` };
  }
  return { file, version, ...pulumiSupport(version, sdk) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const choice = choosePulumi();
  const which = choice.file ? `${choice.file} ${choice.version ?? ""}`.trim() : "pulumi";
  process.stderr.write(
    choice.supported
      ? `example: using ${which} from PATH (${choice.reason})\n`
      : `example: not using ${which} (${choice.reason}); building the Pulumi CLI into .tools/\n`,
  );
  process.exit(choice.supported ? 0 : 1);
}
