// Reading the project's Markdown as the docs tests check it: which files, their fenced code blocks,
// their links and the anchors GitHub gives their headings.
import * as fs from "node:fs";
import * as path from "node:path";

/** Repository root. */
export const repoRoot = path.resolve(__dirname, "..", "..");

function markdownUnder(dir: string): string[] {
  const full = path.join(repoRoot, dir);
  if (!fs.existsSync(full)) return [];
  return (fs.readdirSync(full, { recursive: true }) as string[])
    .filter((f) => f.endsWith(".md") && !f.split(path.sep).includes("node_modules"))
    .map((f) => path.join(dir, f))
    .sort();
}

/** README.md and every page under docs/: the pages whose TypeScript blocks must compile. */
export function documentationFiles(): string[] {
  return ["README.md", ...markdownUnder("docs")];
}

/** The documentation pages and every example's README: the pages whose links must resolve. */
export function linkedFiles(): string[] {
  const examples = markdownUnder("examples").filter((f) => path.basename(f) === "README.md");
  return [...documentationFiles(), ...examples];
}

/** A fenced code block: its language, its text, and the 1-based line of its first code line. */
export interface CodeBlock {
  file: string;
  line: number;
  lang: string;
  code: string;
  /** The reason of a `<!-- not compiled: reason -->` comment before the fence (blank lines between), if any. */
  notCompiled?: string;
}

const fence = /^ {0,3}(`{3,}|~{3,})\s*([\w-]*)/;

/** The fenced code blocks of a Markdown file (`file` relative to the repository root). */
export function codeBlocks(file: string): CodeBlock[] {
  const lines = fs.readFileSync(path.join(repoRoot, file), "utf8").split("\n");
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = fence.exec(lines[i]!);
    if (!open) continue;
    const marker = open[1]!;
    const end = lines.findIndex((l, j) => j > i && l.trimStart().startsWith(marker));
    const close = end === -1 ? lines.length : end;
    let p = i - 1;
    while (p >= 0 && lines[p]!.trim() === "") p--;
    const before = p >= 0 ? /^<!--\s*not compiled:\s*(.+?)\s*-->\s*$/.exec(lines[p]!) : null;
    blocks.push({
      file,
      line: i + 2,
      lang: open[2]!.toLowerCase(),
      code: lines.slice(i + 1, close).join("\n"),
      ...(before && { notCompiled: before[1] }),
    });
    i = close;
  }
  return blocks;
}

const blank = (s: string) => s.replace(/[^\n]/g, " ");

/** The text with its fenced blocks blanked out with spaces (newlines kept, so lines still count). */
function withoutFences(text: string): string {
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = fence.exec(lines[i]!);
    if (!open) continue;
    let j = i + 1;
    while (j < lines.length && !lines[j]!.trimStart().startsWith(open[1]!)) j++;
    for (let k = i; k <= Math.min(j, lines.length - 1); k++) lines[k] = blank(lines[k]!);
    i = j;
  }
  return lines.join("\n");
}

/**
 * The text as prose: fenced blocks, inline code spans and HTML comments blanked out, so what looks
 * like a link inside code is not one.
 */
function prose(text: string): string {
  return withoutFences(text)
    .replace(/<!--[\s\S]*?-->/g, blank)
    .replace(/(`+)[\s\S]*?\1/g, blank);
}

/** A link of a Markdown file: where it points and the 1-based line it is on. */
export interface Link {
  file: string;
  line: number;
  target: string;
}

/** Inline links and images `[text](target)`, reference definitions `[x]: target` and autolinks `<url>`. */
export function links(file: string): Link[] {
  const text = prose(fs.readFileSync(path.join(repoRoot, file), "utf8"));
  const lineOf = (index: number) => text.slice(0, index).split("\n").length;
  const found: Link[] = [];
  const patterns = [
    /\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g,
    /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm,
    /<((?:https?|mailto|ftp):[^>\s]*)>/g,
  ];
  for (const pattern of patterns) {
    for (const m of text.matchAll(pattern)) found.push({ file, line: lineOf(m.index), target: m[1]! });
  }
  return found.sort((a, b) => a.line - b.line);
}

/** The anchor GitHub gives a heading's text (github-slugger): lowercase, punctuation gone, spaces to '-'. */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // a link's text
    .replace(/<[^>]+>/g, "") // inline HTML
    .replace(/[`*~]/g, "") // code and emphasis marks
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor of a Markdown file's headings, with GitHub's -1, -2 … for repeated ones. */
export function anchors(file: string): Set<string> {
  const text = withoutFences(fs.readFileSync(file, "utf8")).replace(/<!--[\s\S]*?-->/g, blank);
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const m of text.matchAll(/^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/gm)) {
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    result.add(n === 0 ? base : `${base}-${n}`);
  }
  return result;
}
