/** Whether `changelog` (CHANGELOG.md's text) has an entry for `version`: a `## <version>` heading. */
export function hasEntry(changelog: string, version: string): boolean;
/** The release's refusal of `version` for lack of an entry, or undefined when `changelog` has one. */
export function missingEntry(changelog: string, version: string): string | undefined;
