/**
 * Refuses, when loaded, to run the plugin on a Node.js older than the package's `engines.node`
 * (package.json): one line on stderr naming the running Node.js and the one needed, and exit code 1.
 * Imported first by the plugin's entry, before `@pulumi/pulumi` or anything else loads: on an older
 * Node the plugin would otherwise start, answer the engine, and fail at its first Kubernetes call.
 * The engine shows that line with the plugin's failure to start.
 * @packageDocumentation
 */

/**
 * The lowest version `range` admits, as numbers `[major, minor, patch]`.
 * @throws Error when `range` is not of the form `>=X`, `>=X.Y` or `>=X.Y.Z` (the only form this
 * package's `engines.node` takes), naming it.
 */
export function minimumOf(range: string): [number, number, number] {
  const m = /^\s*>=\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*$/.exec(range);
  if (!m) throw new Error(`engines.node "${range}" is not of the form >=X.Y.Z`);
  return [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)];
}

/** Whether Node.js `version` (`v20.20.2` or `20.20.2`) satisfies `range` (see {@link minimumOf}). */
export function satisfies(version: string, range: string): boolean {
  const have = version.replace(/^v/, "").split(".").map(Number);
  const need = minimumOf(range);
  for (let i = 0; i < 3; i++) if ((have[i] ?? 0) !== need[i]) return (have[i] ?? 0) > need[i]!;
  return true;
}

/** The refusal for Node.js `version` at `execPath` against `range`, or undefined when it satisfies it. */
export function nodeRefusal(version: string, execPath: string, range: string): string | undefined {
  if (satisfies(version, range)) return undefined;
  return (
    `pulumi-resource-egress-ipam needs Node.js ${range}, and this is Node.js ${version} (${execPath}): ` +
    `put a newer node first on PATH, or name it in PULUMI_EGRESS_IPAM_NODE`
  );
}

// provider/plugin/ and dist/plugin/ alike sit two folders below the package's root. A `require`
// (not a read at run time), so the release's single executable carries it in its bundle, where
// there is no package folder to read (scripts/release/bundle-plugin.mjs).
const engines = (require("../../package.json") as { engines: { node: string } }).engines.node;
const refusal = nodeRefusal(process.version, process.execPath, engines);
if (refusal) {
  process.stderr.write(`${refusal}\n`);
  process.exit(1);
}
