// The docs' examples for YAML, Python and Go programs (the plugin's users) cannot rot: every
// resource page shows its example in all four languages, each declaring the resources of the
// TypeScript block it follows, and every YAML program sets only what the plugin's schema has, with
// the required inputs present and its `${…}` naming what the program declares. The Python blocks
// run and the Go blocks compile in language-blocks.cluster.test.ts, with the generated SDKs.
import { describe, expect, it } from "vitest";
import { codeBlocks, documentationFiles, type CodeBlock } from "../support/markdown";
import { pluginSchema, resourceToken, type PackageSchema } from "../support/schema-inputs";
import { yamlProblems, yamlProgram } from "../support/yaml-program";

const languages = ["python", "go", "yaml"];

/** The resources a block declares, as `<Kind> <name>`: what the same example declares in every language. */
function declared(block: CodeBlock, schema: PackageSchema): string[] {
  const found = (pattern: RegExp) => [...block.code.matchAll(pattern)].map((m) => `${m[1]} ${m[2]}`);
  switch (block.lang) {
    case "yaml":
      return Object.entries(yamlProgram(block.code)?.resources ?? {})
        .filter(([, r]) => resourceToken(schema, r.type))
        .map(([key, r]) => `${r.type.split(":").at(-1)} ${r.name ?? key}`)
        .sort();
    case "python":
      return found(/\b([A-Z]\w*)\(\s*"([^"]+)"/g).sort();
    case "go":
      return found(/\bNew(\w+)\(ctx,\s*"([^"]+)"/g).sort();
    default:
      return found(/\bnew (\w+)\(\s*"([^"]+)"/g).sort();
  }
}

/** Each Python, Go and YAML block of a page with the TypeScript block before it. */
function pairs(file: string): { ts: CodeBlock; other: CodeBlock }[] {
  let ts: CodeBlock | undefined;
  const out: { ts: CodeBlock; other: CodeBlock }[] = [];
  for (const block of codeBlocks(file)) {
    if (block.lang === "ts") ts = block;
    else if (ts && languages.includes(block.lang)) out.push({ ts, other: block });
  }
  return out;
}

const resourcePages = documentationFiles().filter((f) => f.startsWith("docs/resources/"));

describe("the resource pages' examples in YAML, Python and Go", () => {
  const schema = pluginSchema();

  it.each(resourcePages)("%s shows an example in TypeScript, Python, Go and YAML", (file) => {
    const shown = new Map<number, Set<string>>();
    for (const { ts, other } of pairs(file))
      shown.set(ts.line, (shown.get(ts.line) ?? new Set()).add(other.lang));
    expect([...shown.values()].some((langs) => languages.every((l) => langs.has(l)))).toBe(true);
  });

  it.each(resourcePages)("%s: each declares the resources of the TypeScript block before it", (file) => {
    const differing = pairs(file).flatMap(({ ts, other }) => {
      const want = declared(ts, schema);
      const got = declared(other, schema);
      return JSON.stringify(got) === JSON.stringify(want)
        ? []
        : [
            `${file}:${other.line} (${other.lang}): ${got.join(", ")}; the TypeScript block: ${want.join(", ")}`,
          ];
    });
    expect(differing).toEqual([]);
  });
});

describe("YAML programs of README.md and docs/", () => {
  const schema = pluginSchema();
  const programs = documentationFiles()
    .flatMap(codeBlocks)
    .filter((b) => b.lang === "yaml")
    .flatMap((b) => {
      const program = yamlProgram(b.code);
      return program ? [{ block: b, program }] : [];
    });

  it("finds them: one on each resource page at least", () => {
    for (const page of resourcePages) expect(programs.map((p) => p.block.file)).toContain(page);
  });

  it("set only the inputs the plugin's schema has, of its types, the required ones too, and interpolate what they declare", () => {
    const problems = programs.flatMap(({ block, program }) =>
      yamlProblems(schema, program).map((p) => `${block.file}:${block.line}: ${p}`),
    );
    expect(problems).toEqual([]);
  });

  const pool =
    "  pool:\n    type: egress-ipam:IpPool\n    properties:\n      ranges: [{ subnet: 10.0.8.0/24 }]\n";
  it.each([
    [
      "a pool and a holder",
      `${pool}  web:\n    type: egress-ipam:index:IpAllocation\n    properties:\n      pool: \${pool}`,
      [],
    ],
    [
      "a misspelt range key",
      "  pool:\n    type: egress-ipam:IpPool\n    properties:\n      ranges: [{ subnet: 10.0.8.0/24, rangeStrat: 10.0.8.10 }]",
      ["pool: ranges[0].rangeStrat: not an input of egress-ipam:index:IpPoolRange"],
    ],
    [
      "a missing required input",
      `${pool}  web:\n    type: egress-ipam:IpAllocation\n    properties: { ip: 10.0.8.9 }`,
      ["web: pool: required by egress-ipam:index:IpAllocation, missing"],
    ],
    [
      "a reference to the wrong kind",
      `${pool}  web:\n    type: egress-ipam:IpAllocation\n    properties:\n      pool: \${pool}\n  db:\n    type: egress-ipam:IpAllocation\n    properties:\n      pool: \${web}`,
      ["db: pool: a reference to egress-ipam:index:IpPool, not egress-ipam:index:IpAllocation"],
    ],
    [
      "a list where a string goes",
      "  pool:\n    type: egress-ipam:IpPool\n    properties: { strategy: [round-robin] }",
      ['pool: strategy: not a string: ["round-robin"]'],
    ],
    [
      "an output the resource does not have, and an undeclared name",
      `${pool}outputs:\n  a: \${pool.sizee}\n  b: \${poool.size}`,
      [
        "${pool.sizee}: egress-ipam:index:IpPool has no output sizee",
        "${poool.size}: the program declares no poool",
      ],
    ],
    [
      "a resource of another package",
      "  ns:\n    type: kubernetes:core/v1:Namespace\n    properties: { anything: 1 }",
      [],
    ],
    [
      "a resource type the plugin has not",
      "  p:\n    type: egress-ipam:Pool",
      ["p: egress-ipam:index:Pool: no such resource in the egress-ipam schema"],
    ],
  ])("judges %s", (_, resources, expected) => {
    const block = { file: "x.md", line: 1, lang: "yaml", code: `resources:\n${resources}\n` };
    expect(yamlProblems(schema, yamlProgram(block.code)!)).toEqual(expected);
  });
});
