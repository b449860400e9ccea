/** A version as `pulumi version` prints it. */
export interface Version {
  major: number;
  minor: number;
  patch: number;
  /** The pre-release part (`alpha.1`), or "". */
  prerelease: string;
}
/** Parses `v3.276.0`, `3.276.0-alpha.1+g1a2b` and the like; undefined for anything else. */
export function parseVersion(text: string): Version | undefined;
/** Whether a CLI of version `cli` runs programs on the SDK `sdk`: same major and `cli` >= `sdk`. */
export function pulumiSupport(cli: string, sdk: string): { supported: boolean; reason: string };
/** The @pulumi/pulumi version of this checkout (installed, else pinned in package.json). */
export function sdkVersion(): string;
/** The decision for the first `pulumi` on `env.PATH`. */
export function choosePulumi(
  env?: NodeJS.ProcessEnv,
  sdk?: string,
): { file?: string; version?: string; supported: boolean; reason: string };
