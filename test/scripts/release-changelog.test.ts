// The release refuses a version that CHANGELOG.md has no entry for: the rule (a table), and the
// release command itself refusing, before it builds anything.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { hasEntry, missingEntry } from "../../scripts/release/changelog.mjs";

const root = path.resolve(__dirname, "..", "..");
const changelog =
  "# Changelog\n\nIntro naming 0.2.0 in passing.\n\n## 0.1.1 (2026-12-08)\n\n- fix\n\n## v0.1.0\n\n- first\n";

describe("hasEntry: a `## <version>` heading", () => {
  it.each([
    ["0.1.1", true], // with a date after it
    ["0.1.0", true], // written with a v
    ["0.2.0", false], // named in a paragraph, not a heading
    ["0.1", false], // a prefix of a version is not the version
    ["1.1.1", false],
    ["0.1.10", false],
  ])("%s: %s", (version, found) => {
    expect(hasEntry(changelog, version)).toBe(found);
  });

  it("this checkout's CHANGELOG.md has an entry for package.json's version", () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
      version: string;
    };
    expect(missingEntry(fs.readFileSync(path.join(root, "CHANGELOG.md"), "utf8"), version)).toBeUndefined();
  });
});

describe("the release command without an entry for its version", () => {
  it("refuses, naming the version and what to do, before building anything", () => {
    const out = fs.mkdtempSync(path.join(root, ".tools", "release-refused-"));
    fs.rmdirSync(out);
    const result = spawnSync(
      process.execPath,
      ["scripts/release.mjs", "--version", "9.9.9", "--plugin-url", "http://127.0.0.1:1/", "--out", out],
      { cwd: root, encoding: "utf8" },
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("CHANGELOG.md has no entry for 9.9.9");
    expect(result.stderr).toContain('add a "## 9.9.9" section');
    expect(fs.existsSync(out)).toBe(false); // nothing made
  });
});
