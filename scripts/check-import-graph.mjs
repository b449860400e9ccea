// Fails when provider/ has an import cycle, between files or between folders at any depth, an import that
// runs up a layer (the lint rule says the same per file; this covers files eslint does not see), or a
// file other than index.ts that imports a sub-folder of its own folder.
// Usage: node scripts/check-import-graph.mjs [sourceDir]
import path from "node:path";
import { cycles, folderCycles, importGraph, layerProblem, subFolderProblem } from "./import-graph.mjs";

const sourceDir = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, "..", "provider"));
const graph = importGraph(sourceDir);
const rel = (f) => path.relative(process.cwd(), f);
const problems = [];
for (const c of cycles(graph)) problems.push(`import cycle between files: ${c.map(rel).join(" ↔ ")}`);
for (const c of folderCycles(sourceDir, graph))
  problems.push(`import cycle between folders: ${c.entries.join(" ↔ ")}`);
for (const [from, deps] of graph) {
  for (const to of deps) {
    const why = layerProblem(sourceDir, from, to) || subFolderProblem(from, to);
    if (why) problems.push(`${rel(from)} imports ${rel(to)}: ${why}`);
  }
}
if (problems.length > 0) {
  console.error(
    `import graph of ${rel(sourceDir)}: ${problems.length} problem(s)\n  ${problems.join("\n  ")}`,
  );
  process.exit(1);
}
const edges = [...graph.values()].reduce((n, d) => n + d.length, 0);
console.log(
  `import graph: ${graph.size} files, ${edges} imports, no cycle, every import runs down a layer, no file imports its own folder's sub-folders`,
);
