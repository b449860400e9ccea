// The release's CHANGELOG rule: every released version has an entry, a `## <version>` heading.

/** Escapes `text` for a regular expression. */
const literal = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Whether `changelog` (the text of CHANGELOG.md) has an entry for `version`: a line starting
 * `## <version>` or `## v<version>`, then the end of the line or a space (`## 0.1.0 (2026-12-07)`).
 */
export function hasEntry(changelog, version) {
  return new RegExp(`^## v?${literal(version)}(\\s|$)`, "m").test(changelog);
}

/** The release's refusal of `version` for lack of an entry, or undefined when `changelog` has one. */
export function missingEntry(changelog, version) {
  if (hasEntry(changelog, version)) return undefined;
  return (
    `release: CHANGELOG.md has no entry for ${version} (the version in package.json): ` +
    `add a "## ${version}" section saying what changed since the last release ` +
    `(docs/versioning.md says which changes need which version), then run the release again`
  );
}

// Run as a script (scripts/release.sh, before any build): refuses package.json's version without
// an entry, with the message above and exit code 1.
if (import.meta.url === `file://${process.argv[1]}`) {
  const fs = await import("node:fs");
  const root = new URL("../../", import.meta.url);
  const { version } = JSON.parse(fs.readFileSync(new URL("package.json", root), "utf8"));
  const refusal = missingEntry(fs.readFileSync(new URL("CHANGELOG.md", root), "utf8"), version);
  if (refusal) {
    process.stderr.write(`${refusal}\n`);
    process.exit(1);
  }
}
