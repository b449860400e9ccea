// Pulumi YAML programs as the docs and examples tests read them: which YAML is one, and what is
// wrong with one that uses the plugin's resources (support/schema-inputs judges their properties).
import { loadAllYaml } from "@kubernetes/client-node";
import { inputProblems, resourceToken, type PackageSchema } from "./schema-inputs";

/** A Pulumi YAML program, as far as the checks read it. */
export interface YamlProgram {
  config?: Record<string, unknown>;
  variables?: Record<string, unknown>;
  resources?: Record<string, { type: string; name?: string; properties?: Record<string, unknown> }>;
  outputs?: Record<string, unknown>;
}

/** The text as a Pulumi YAML program, or undefined for other YAML (manifests, stack settings). */
export function yamlProgram(text: string): YamlProgram | undefined {
  const docs = loadAllYaml(text) as (YamlProgram & { kind?: unknown })[];
  const doc = docs.length === 1 ? docs[0] : undefined; // manifests come several to a block
  return doc && typeof doc === "object" && doc.resources && doc.kind === undefined ? doc : undefined;
}

/** The problems of a YAML program: its resources' inputs, and every `${name.property}` in it. */
export function yamlProblems(schema: PackageSchema, program: YamlProgram): string[] {
  const resources = program.resources ?? {};
  const tokens = new Map(Object.entries(resources).map(([k, r]) => [k, resourceToken(schema, r.type)]));
  const declared = new Set([
    ...Object.keys(resources),
    ...Object.keys(program.variables ?? {}),
    ...Object.keys(program.config ?? {}),
  ]);
  const problems: string[] = [];
  const expressions = (value: unknown): string[] =>
    typeof value === "string"
      ? [...value.matchAll(/\$\{([^}]+)\}/g)].map((m) => m[1]!)
      : value && typeof value === "object"
        ? Object.values(value).flatMap(expressions)
        : [];
  for (const expression of expressions(program)) {
    const [name = "", property] = expression.split(/[.[]/);
    const token = tokens.get(name);
    if (!declared.has(name)) problems.push(`\${${expression}}: the program declares no ${name}`);
    else if (token && property && !property.startsWith('"')) {
      const r = schema.resources[token];
      if (!r?.properties?.[property] && !r?.inputProperties?.[property])
        problems.push(`\${${expression}}: ${token} has no output ${property}`);
    }
  }
  for (const [key, r] of Object.entries(resources)) {
    const token = tokens.get(key);
    if (!token) continue; // another package's resource
    // `${name}` is a reference to that resource; any other interpolation is the engine's to know.
    const resolve = (v: unknown) => {
      if (typeof v !== "string" || !v.includes("${")) return undefined;
      const whole = /^\$\{([^}.[]+)\}$/.exec(v);
      return (whole && tokens.get(whole[1]!)) || "unknown";
    };
    problems.push(...inputProblems(schema, token, r.properties ?? {}, resolve).map((p) => `${key}: ${p}`));
  }
  return problems;
}
