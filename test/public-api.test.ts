// The public API beyond the TypeScript exports (docs/versioning.md): type tokens, each resource's
// declared outputs, the shim modules state loads, the package's export paths, the CLI's commands,
// flags and exit codes, and the error codes, compared with test/public-api.json. Removing or
// renaming one needs a breaking version step; adding one needs the record updated.
import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import { expect, it } from "vitest";
import { program } from "../provider/cli/main";
import { exitCodes } from "../provider/cli/cli-error";

const root = path.resolve(__dirname, "..");
const recordFile = path.join(__dirname, "public-api.json");
const source = path.join(root, "provider");
const sources = fs
  .readdirSync(source, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith(".ts"))
  .map((f) => path.join(source, f));

/** Every item of the public API this test can see, as sorted lines `<kind> <item>`. */
function publicApi(): string[] {
  const items: string[] = [];
  for (const file of sources) {
    const text = fs.readFileSync(file, "utf8");
    for (const m of text.matchAll(/"egress-ipam",\s*"(\w+)",?\s*\)/g))
      items.push(`type pulumi-nodejs:dynamic/egress-ipam:${m[1]}`);
    for (const m of text.matchAll(/super\("(egress-ipam:[\w:]+)"/g)) items.push(`type ${m[1]}`);
    // Each exported class's public readonly properties: a resource's outputs (`declare public
    // readonly x`), a component's, and what programs pass on (`IpPool.ref`).
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
    for (const node of source.statements) {
      if (!ts.isClassDeclaration(node) || !node.name) continue;
      for (const member of node.members) {
        if (!ts.isPropertyDeclaration(member)) continue;
        const flags = ts.getCombinedModifierFlags(member);
        const open = !(flags & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected));
        if (open && flags & ts.ModifierFlags.Readonly && !member.name.getText(source).startsWith("#"))
          items.push(`output ${node.name.text}.${member.name.getText(source)}`);
      }
    }
  }
  for (const f of fs.readdirSync(path.join(source, "shims"))) {
    if (f !== "shim.ts") items.push(`shim pulumi-egress-ipam/shims/${f.replace(/\.ts$/, "")}`);
  }
  const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
  for (const key of Object.keys(manifest.exports)) items.push(`export ${key}`);
  for (const name of Object.keys(manifest.bin)) items.push(`bin ${name}`);
  for (const command of program().commands) {
    items.push(`command ${command.name()}`);
    for (const option of command.options) items.push(`flag ${command.name()} ${option.long}`);
  }
  for (const [name, code] of Object.entries(exitCodes)) items.push(`exit ${name}=${code}`);
  const errors = fs.readFileSync(path.join(source, "core", "ipam-error.ts"), "utf8");
  const union = /export type IpamErrorCode =([^;]*);/.exec(errors)?.[1] ?? "";
  for (const m of union.matchAll(/"([A-Z_]+)"/g)) items.push(`error ${m[1]}`);
  return [...new Set(items)].sort();
}

/** The version step that may remove API: the major, or the minor below 1.0.0. */
const breakingLevel = (version: string): string => {
  const [major, minor] = version.split(".");
  return major === "0" ? `0.${minor}` : String(major);
};

it("the public API is what test/public-api.json records, or the version says it may differ", () => {
  const current = publicApi();
  const version = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version as string;
  if (process.env.UPDATE_PUBLIC_API) {
    fs.writeFileSync(recordFile, `${JSON.stringify({ version, api: current }, null, 2)}\n`);
  }
  const record = JSON.parse(fs.readFileSync(recordFile, "utf8")) as { version: string; api: string[] };
  const removed = record.api.filter((x) => !current.includes(x));
  const added = current.filter((x) => !record.api.includes(x));
  // Kinds the test must keep seeing: an empty list would mean the scan broke, not that the API is gone.
  for (const kind of ["type", "output", "shim", "export", "command", "flag", "exit", "error"])
    expect(
      current.some((x) => x.startsWith(`${kind} `)),
      kind,
    ).toBe(true);
  if (breakingLevel(version) === breakingLevel(record.version)) {
    expect(
      removed,
      `removed or renamed public API needs a breaking version (${record.version} → next major, or next ` +
        `minor before 1.0.0) and a CHANGELOG entry; see docs/versioning.md`,
    ).toEqual([]);
  }
  expect(
    added,
    "new public API: record it with UPDATE_PUBLIC_API=1 npx vitest run test/public-api.test.ts (a minor version)",
  ).toEqual([]);
});
