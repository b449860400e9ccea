// The source's import graph and its layers, shared by the lint rule (eslint.config.mjs) and the
// cycle check (scripts/check-import-graph.mjs).
import fs from "node:fs";
import path from "node:path";

/**
 * The layers of provider/, lowest first: a file may import its own top folder and any folder of a lower
 * layer, never one of its own layer or above. `shims` stays low because it loads the runtime by
 * package name at run time (a require of `pulumi-egress-ipam/runtime`, never a relative import).
 */
export const layers = [
  ["core"],
  ["allocator", "shims"],
  ["kube"],
  ["ledger", "provisioners"],
  ["resources"],
  ["runtime", "testing"],
  ["cli", "plugin"],
  ["index.ts"],
];

const rankOf = new Map(layers.flatMap((names, rank) => names.map((n) => [n, rank])));

/** The top folder (or root file) of a path inside `sourceDir`, or undefined outside it. */
export function topOf(sourceDir, file) {
  const rel = path.relative(sourceDir, file);
  if (rel.startsWith("..") || path.isAbsolute(rel)) return undefined;
  return rel.split(path.sep)[0];
}

/**
 * Why `from` (a file) may not import `to` (a resolved file), or "" when it may. Both are absolute.
 */
export function layerProblem(sourceDir, from, to) {
  const a = topOf(sourceDir, from);
  const b = topOf(sourceDir, to);
  if (a === undefined || b === undefined || a === b) return "";
  const ra = rankOf.get(a);
  const rb = rankOf.get(b);
  if (ra === undefined)
    return `provider/${a} is in no layer: add it to the layers in scripts/import-graph.mjs`;
  if (rb === undefined)
    return `provider/${b} is in no layer: add it to the layers in scripts/import-graph.mjs`;
  if (rb < ra) return "";
  const where = rb === ra ? "the same layer as" : "a layer above";
  return `provider/${b} is ${where} provider/${a}; imports run downward only (${layers.map((l) => l.join(" ")).join(" < ")})`;
}

/**
 * Why `from` may not import `to` within one folder, or "" when it may: a folder's own files (its
 * interfaces and the helpers its sub-folders share) import none of its sub-folders, so each
 * sub-folder (an implementation: provisioners/aws, provisioners/kubernetes/ovn) depends on them
 * and never the other way round. Only the folder's `index.ts`, which re-exports its parts, may.
 */
export function subFolderProblem(from, to) {
  const folder = path.dirname(from);
  if (path.basename(from) === "index.ts" || !to.startsWith(folder + path.sep)) return "";
  if (path.dirname(to) === folder) return "";
  const sub = path.relative(folder, to).split(path.sep)[0];
  return `a folder's own files import none of its sub-folders (${sub}/); only its index.ts may`;
}

const specifier = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)(["'])(\.{1,2}\/[^"']*)\1/gm;

/** The relative specifiers a source text imports or requires. */
export function relativeSpecifiers(text) {
  return [...text.matchAll(specifier)].map((m) => m[2]);
}

/** The file a relative specifier names, or undefined when none exists. */
export function resolveSpecifier(from, spec) {
  const base = path.resolve(path.dirname(from), spec);
  for (const c of [base, `${base}.ts`, path.join(base, "index.ts")]) {
    if (fs.existsSync(c) && fs.statSync(c).isFile()) return c;
  }
  return undefined;
}

/** Every .ts file under `dir` with the files it imports (resolved, inside or outside `dir`). */
export function importGraph(dir) {
  const graph = new Map();
  for (const rel of fs.readdirSync(dir, { recursive: true })) {
    const file = path.join(dir, rel);
    if (!file.endsWith(".ts") || file.endsWith(".d.ts")) continue;
    const deps = relativeSpecifiers(fs.readFileSync(file, "utf8"))
      .map((s) => resolveSpecifier(file, s))
      .filter((f) => f !== undefined);
    graph.set(file, [...new Set(deps)]);
  }
  return graph;
}

/** The strongly connected components of more than one node (or with a self edge): the cycles. */
export function cycles(graph) {
  let index = 0;
  const stack = [];
  const info = new Map();
  const found = [];
  const visit = (v) => {
    info.set(v, { index, low: index, on: true });
    index++;
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!info.has(w)) {
        visit(w);
        info.get(v).low = Math.min(info.get(v).low, info.get(w).low);
      } else if (info.get(w).on) {
        info.get(v).low = Math.min(info.get(v).low, info.get(w).index);
      }
    }
    if (info.get(v).low === info.get(v).index) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        info.get(w).on = false;
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!info.has(v)) visit(v);
  return found;
}

/**
 * The import graphs between the entries of every folder, keyed by the folder's path inside
 * `sourceDir` ("" for `sourceDir` itself): at each depth, the nodes are a folder's files and
 * sub-folders (by their paths inside `sourceDir`), with an edge wherever a file under one imports a
 * file under another. At the top this is the graph of top folders (and `index.ts`).
 */
export function entryGraphs(sourceDir, graph) {
  const byFolder = new Map();
  const edge = (folder, a, b) => {
    if (!byFolder.has(folder)) byFolder.set(folder, new Map());
    const nodes = byFolder.get(folder);
    for (const n of [a, b]) if (!nodes.has(n)) nodes.set(n, new Set());
    nodes.get(a).add(b);
  };
  for (const [from, deps] of graph) {
    const a = path.relative(sourceDir, from).split(path.sep);
    for (const to of deps) {
      const b = path.relative(sourceDir, to).split(path.sep);
      if (b[0] === "..") continue;
      let depth = 0;
      while (depth < a.length - 1 && depth < b.length - 1 && a[depth] === b[depth]) depth++;
      if (a[depth] === b[depth]) continue;
      const folder = a.slice(0, depth);
      edge(folder.join("/"), [...folder, a[depth]].join("/"), [...folder, b[depth]].join("/"));
    }
  }
  return new Map([...byFolder].map(([k, nodes]) => [k, new Map([...nodes].map(([n, v]) => [n, [...v]]))]));
}

/**
 * The cycles between entries of a folder at any depth that include a sub-folder (a cycle of
 * files alone is a cycle between files).
 */
export function folderCycles(sourceDir, graph) {
  const found = [];
  for (const [folder, entries] of entryGraphs(sourceDir, graph)) {
    const isFolder = (entry) =>
      fs.existsSync(path.join(sourceDir, entry)) && fs.statSync(path.join(sourceDir, entry)).isDirectory();
    for (const c of cycles(entries)) if (c.some(isFolder)) found.push({ folder, entries: c });
  }
  return found;
}
