// Writes (or, with --check, verifies) the input and output tables of docs/resources/<kind>.md from
// the TSDoc of the resources' Args interfaces and classes, so the reference cannot drift from the
// code. The prose around the tables is hand-written; only the part between the markers is generated.
// Usage: node scripts/api-docs.mjs [--check]
import * as fs from "node:fs";
import * as path from "node:path";
import * as prettier from "prettier";
import ts from "typescript";

const root = process.env.API_DOCS_ROOT ?? path.resolve(import.meta.dirname, "..");

/** Each page: the file, and the interfaces (inputs) and classes (outputs) it documents, in order. */
export const pages = [
  { doc: "docs/errors.md", errors: true },
  {
    doc: "docs/resources/ip-pool.md",
    sources: [
      "provider/resources/ip-pool/ip-pool.ts",
      "provider/resources/pool/pool-spec.ts",
      "provider/resources/pool/ledger-option.ts",
      "provider/ledger/quota-rules.ts",
    ],
    tables: [
      ["inputs", "IpPoolArgs"],
      ["inputs", "IpPoolRange"],
      ["inputs", "PrefixLengthRule"],
      ["inputs", "LedgerArgs"],
      ["inputs", "SharedIpPoolArgs"],
      ["inputs", "PoolQuotas"],
      ["outputs", "IpPool"],
      ["inputs", "PoolAllocation"],
    ],
  },
  {
    doc: "docs/resources/ip-allocation.md",
    sources: ["provider/resources/ip-allocation/ip-allocation.ts"],
    tables: [
      ["inputs", "IpAllocationArgs"],
      ["outputs", "IpAllocation"],
    ],
  },
  {
    doc: "docs/resources/prefix-allocation.md",
    sources: ["provider/resources/prefix-allocation/prefix-allocation.ts"],
    tables: [
      ["inputs", "PrefixAllocationArgs"],
      ["outputs", "PrefixAllocation"],
    ],
  },
  {
    doc: "docs/resources/egress-ip.md",
    sources: [
      "provider/resources/egress-ip/egress-ip.ts",
      "provider/resources/egress-ip/egress-ip-assignment.ts",
    ],
    tables: [
      ["inputs", "EgressIpArgs"],
      ["outputs", "EgressIp"],
      ["inputs", "EgressIpAssignmentArgs"],
      ["outputs", "EgressIpAssignment"],
    ],
  },
  {
    doc: "docs/resources/cidr-assignment.md",
    sources: ["provider/resources/cidr-assignment/cidr-assignment.ts"],
    tables: [
      ["inputs", "CidrAssignmentArgs"],
      ["outputs", "CidrAssignment"],
    ],
  },
];

const cell = (text) =>
  text
    .replace(/\{@link\s+([^}\s]+)\s*\}/g, "$1")
    .replace(/\s+/g, " ")
    .replace(/\|/g, "\\|")
    .trim();
const docOf = (node) =>
  ts
    .getJSDocCommentsAndTags(node)
    .map((d) => (typeof d.comment === "string" ? d.comment : (ts.getTextOfJSDocComment(d.comment) ?? "")))
    .join(" ");
// `pulumi.Input<X>` and `pulumi.Output<X>` are how values arrive and leave, not what they are.
const plainType = (text) => {
  let t = text;
  for (let i = 0; i < 4; i++) t = t.replace(/pulumi\.(Input|Output)<((?:[^<>]|<[^<>]*>)*)>/g, "$2");
  return t;
};

function declarations(files) {
  const found = new Map();
  for (const file of files) {
    const source = ts.createSourceFile(
      file,
      fs.readFileSync(path.join(root, file), "utf8"),
      ts.ScriptTarget.ES2022,
      true,
    );
    for (const node of source.statements) {
      const named =
        ts.isInterfaceDeclaration(node) || ts.isClassDeclaration(node) || ts.isTypeAliasDeclaration(node);
      if (named && node.name) {
        found.set(node.name.text, { node, source, file });
      }
    }
  }
  return found;
}

function table(kind, name, decl) {
  const { node, source, file } = decl;
  const rows = [];
  for (const m of node.members) {
    if (!m.name || !ts.isIdentifier(m.name)) continue;
    if (kind === "outputs") {
      if (!ts.isPropertyDeclaration(m)) continue;
      const mods = ts.getCombinedModifierFlags(m);
      if (!(mods & ts.ModifierFlags.Public) || !(mods & ts.ModifierFlags.Readonly)) continue;
    } else if (!ts.isPropertySignature(m)) continue;
    const type = m.type ? plainType(m.type.getText(source)) : "";
    const optional = m.questionToken ? "" : kind === "inputs" ? "yes" : "";
    const doc = docOf(m);
    if (!doc) throw new Error(`${file}: ${name}.${m.name.text} has no TSDoc; document it`);
    rows.push(kind === "inputs" ? [m.name.text, type, optional, doc] : [m.name.text, type, doc]);
  }
  const head = kind === "inputs" ? ["input", "type", "required", "meaning"] : ["output", "type", "meaning"];
  const lines = [
    `### ${name}`,
    "",
    cell(docOf(node)),
    "",
    `| ${head.join(" | ")} |`,
    `| ${head.map(() => "---").join(" | ")} |`,
    ...rows.map((r) => `| ${r.map((c, i) => (i < 2 ? "`" + cell(c) + "`" : cell(c))).join(" | ")} |`),
  ];
  return lines.join("\n");
}

/**
 * The errors page: one row per code of the IpamErrorCode union, from the bullets of its TSDoc;
 * each bullet is `code: meaning. Do: what to do.`, and a bullet without its `Do:` fails the build.
 */
function errorTable() {
  const file = "provider/core/ipam-error.ts";
  const { node, source } = declarations([file]).get("IpamErrorCode");
  const codes = node.type.types.map((t) => t.literal.text);
  const text = ts
    .getJSDocCommentsAndTags(node)
    .map((d) => d.getText(source))
    .join("\n");
  const bullets = text
    .replace(/^\s*\/?\*+\/?/gm, "")
    .split(/\n\s*-\s+/)
    .slice(1)
    .map((b) => b.replace(/\s+/g, " ").trim());
  const rows = [];
  for (const code of codes) {
    const bullet = bullets.find((b) => b.match(/^(`[A-Z_]+`(?: \/ )?)+/)?.[0].includes(`\`${code}\``));
    if (!bullet) throw new Error(`${file}: the code ${code} has no bullet in the TSDoc of IpamErrorCode`);
    const [meaning, todo, ...more] = bullet.replace(/^(`[A-Z_]+`(?: \/ )?)+:\s*/, "").split(/\s+Do:\s+/);
    if (!todo || more.length > 0)
      throw new Error(
        `${file}: the bullet of ${code} in the TSDoc of IpamErrorCode needs one "Do: <what to do>"`,
      );
    rows.push(`| \`${code}\` | ${cell(meaning)} | ${cell(todo)} |`);
  }
  return ["| code | meaning | what to do |", "| --- | --- | --- |", ...rows].join("\n");
}

const begin = "<!-- generated by scripts/api-docs.mjs from the TSDoc: do not edit -->";
const end = "<!-- end of generated -->";

/** The generated section of a page. */
export function generated(page) {
  if (page.errors) return errorTable();
  const decls = declarations(page.sources);
  return page.tables
    .map(([kind, name]) => {
      const d = decls.get(name);
      if (!d) throw new Error(`${page.doc}: ${name} not found in ${page.sources.join(", ")}`);
      return table(kind, name, d);
    })
    .join("\n\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const check = process.argv.includes("--check");
  const stale = [];
  for (const page of pages) {
    const file = path.join(root, page.doc);
    const text = fs.readFileSync(file, "utf8");
    const a = text.indexOf(begin);
    const b = text.indexOf(end);
    if (a < 0 || b < a) throw new Error(`${page.doc}: the markers ${begin} … ${end} are missing`);
    // Formatted as `prettier --check` wants it, so that both checks can pass.
    const options = { ...(await prettier.resolveConfig(file)), filepath: file };
    const next = await prettier.format(
      `${text.slice(0, a)}${begin}\n\n${generated(page)}\n\n${text.slice(b)}`,
      options,
    );
    if (next === text) continue;
    if (check) stale.push(page.doc);
    else fs.writeFileSync(file, next);
  }
  // The README stays an entry page, and no link of it or of docs/ points nowhere.
  const readme = fs.readFileSync(path.join(root, "README.md"));
  if (readme.length > 12 * 1024)
    stale.push(`README.md (${readme.length} bytes; keep it under 12 KB, details go to docs/)`);
  const pagesWithLinks = [
    "README.md",
    ...fs.readdirSync(path.join(root, "docs"), { recursive: true }).map((f) => path.join("docs", f)),
  ];
  for (const page of pagesWithLinks.filter((f) => f.endsWith(".md"))) {
    const text = fs.readFileSync(path.join(root, page), "utf8");
    for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      if (!fs.existsSync(path.join(root, path.dirname(page), target)))
        stale.push(`${page}: a link to ${target}, which does not exist`);
    }
  }
  if (stale.length > 0) {
    console.error(
      `docs need attention:\n  ${stale.join("\n  ")}\n(generated tables: run node scripts/api-docs.mjs)`,
    );
    process.exit(1);
  }
  console.log(`api docs: ${pages.length} reference pages ${check ? "match" : "written from"} the TSDoc`);
}
