/** Repository root. */
export const repoRoot: string;
/** Builds this checkout and packs it into `destination` (no package scripts run); returns the tarball's path. */
export function packPackage(destination: string): string;
/**
 * Builds, packs and installs this package into a cached consumer project (`.tools/<name>/<sha>`),
 * with `extraDependencies` (name → version) besides @pulumi/pulumi and typescript; returns its directory.
 */
export function prepareConsumerProject(options?: {
  name?: string;
  extraDependencies?: Record<string, string>;
}): string;
/**
 * An example's `index.ts` as an Automation API inline program resolving from the consumer project,
 * with `standIns` (module name → module) answering those imports instead.
 */
export function exampleProgram(
  file: string,
  consumerDir: string,
  standIns?: Record<string, unknown>,
): () => Promise<Record<string, unknown>>;
