// The reference pages are generated from the TSDoc: a changed comment, an undocumented input, a
// broken link or an oversized README must each fail `node scripts/api-docs.mjs --check`.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(__dirname, "..", "..");
const script = path.join(root, "scripts", "api-docs.mjs");

/** A copy of what the docs are made from, with `edit` applied; returns the check's outcome. */
function checkAfter(edit: (dir: string) => void) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "api-docs-"));
  for (const f of ["README.md", "CHANGELOG.md", ".prettierrc.json", "docs", "provider"]) {
    fs.cpSync(path.join(root, f), path.join(dir, f), { recursive: true });
  }
  fs.symlinkSync(path.join(root, "examples"), path.join(dir, "examples")); // links of the README
  edit(dir);
  return spawnSync(process.execPath, [script, "--check"], {
    cwd: root,
    env: { ...process.env, API_DOCS_ROOT: dir },
    encoding: "utf8",
  });
}
const replaceIn = (dir: string, file: string, from: string, to: string) => {
  const p = path.join(dir, file);
  const text = fs.readFileSync(p, "utf8");
  expect(text).toContain(from);
  fs.writeFileSync(p, text.replace(from, to));
};

describe("api-docs --check", () => {
  it("passes the repository as it is", () => {
    const out = checkAfter(() => {});
    expect(out.stderr).toBe("");
    expect(out.status).toBe(0);
  });

  it.each([
    [
      "a changed TSDoc comment",
      (d: string) =>
        replaceIn(
          d,
          "provider/resources/ip-allocation/ip-allocation.ts",
          "/** The pool to allocate from. Changing it replaces the allocation. */",
          "/** Changed. */",
        ),
      /docs\/resources\/ip-allocation\.md/,
    ],
    [
      "an input without TSDoc",
      (d: string) =>
        replaceIn(
          d,
          "provider/resources/cidr-assignment/cidr-assignment.ts",
          "  pool: IpPool;",
          "  pool: IpPool;\n  extra?: string;",
        ),
      /CidrAssignmentArgs\.extra has no TSDoc/,
    ],
    [
      "a link to nowhere",
      (d: string) => fs.appendFileSync(path.join(d, "docs/cli.md"), "\nSee [gone](gone.md).\n"),
      /docs\/cli\.md: a link to gone\.md, which does not exist/,
    ],
    [
      "a README over 12 KB",
      (d: string) => fs.appendFileSync(path.join(d, "README.md"), `\n${"x".repeat(80)}\n`.repeat(100)),
      /README\.md \(\d+ bytes; keep it under 12 KB/,
    ],
    [
      "an error code without a bullet",
      (d: string) =>
        replaceIn(d, "provider/core/ipam-error.ts", ' | "UNEXPECTED";', ' | "UNEXPECTED"\n  | "NEW_CODE";'),
      /the code NEW_CODE has no bullet/,
    ],
    [
      "an error code without what to do",
      (d: string) =>
        replaceIn(
          d,
          "provider/core/ipam-error.ts",
          "budget allows (raised by the Kubernetes client layer). Do: run again",
          "budget allows (raised by the Kubernetes client layer). Then: run again",
        ),
      /the bullet of CONFLICT .* needs one "Do: <what to do>"/,
    ],
    [
      "a changed what to do",
      (d: string) =>
        replaceIn(d, "provider/core/ipam-error.ts", "Do: give at least one range.", "Do: give two ranges."),
      /docs\/errors\.md/,
    ],
  ])("fails on %s", (_, edit, message) => {
    const out = checkAfter(edit);
    expect(out.status).not.toBe(0);
    expect(out.stderr).toMatch(message);
  });
});
