// Fails when an exported declaration under provider/ has no TSDoc comment: the published API is
// documented at its source (STYLE: TSDoc on every export saying what it does and when it throws).
import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";

const root = path.resolve(import.meta.dirname, "..", "provider");
const files = fs
  .readdirSync(root, { recursive: true })
  .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
  .map((f) => path.join(root, f));

const exported = (node) => ts.getCombinedModifierFlags(node) & ts.ModifierFlags.Export;
const documented = (node) => ts.getJSDocCommentsAndTags(node).length > 0;
const missing = [];
for (const file of files) {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true);
  for (const node of source.statements) {
    if (!ts.canHaveModifiers(node) || !exported(node)) continue;
    // For `export const x = ...`, the comment sits on the statement; the name is on the declaration.
    const name = ts.isVariableStatement(node)
      ? node.declarationList.declarations.map((d) => d.name.getText(source)).join(", ")
      : node.name?.getText(source);
    if (name && !documented(node)) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
      missing.push(`${path.relative(process.cwd(), file)}:${line + 1} ${name}`);
    }
  }
}
if (missing.length > 0) {
  console.error(`exported declarations without TSDoc (${missing.length}):\n  ${missing.join("\n  ")}`);
  process.exit(1);
}
console.log(`api docs: every export of ${files.length} files under provider/ has TSDoc`);
