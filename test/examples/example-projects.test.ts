// Every example is a project as users build it, named `egress-ipam-<folder>`. A TypeScript one has
// its own tsconfig.json (the compiler options the repository's typecheck gives examples/*/index.ts,
// which Pulumi's ts-node reads at preview), a typescript devDependency of the repository's range,
// and a program (and steps) that compile under that tsconfig alone. A YAML or Python one (through
// the plugin) says in its README how to install the plugin (and the SDK) of this version, sets only
// what the plugin's schema has (YAML) or parses (Python), and, as a variant `<example>-<language>`,
// has that example's steps and stacks: test/e2e/example-runs.ts runs it for the same outputs.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { exampleNames, exampleRuntime } from "../support/example-project";
import { pluginSchema } from "../support/schema-inputs";
import { yamlProblems, yamlProgram } from "../support/yaml-program";

const root = path.resolve(__dirname, "..", "..");
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, "utf8"));
const own = readJson(path.join(root, "package.json"));

/** Compiler options of a tsconfig file as TypeScript reads them (extends resolved). */
function optionsOf(file: string): ts.CompilerOptions {
  const { config, error } = ts.readConfigFile(file, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, "\n"));
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, path.dirname(file));
  return parsed.options;
}

// Options of the root tsconfig that only the repository needs: its own sources and their types
// (`types: ["node"]`, the path mapping of the package to provider/), JSON modules (the plugin's
// schema), and declaration output.
const repositoryOnly = [
  "types",
  "resolveJsonModule",
  "baseUrl",
  "paths",
  "pathsBasePath",
  "declaration",
  "sourceMap",
  "configFilePath",
];
const withoutRepositoryOnly = (o: ts.CompilerOptions) =>
  Object.fromEntries(Object.entries(o).filter(([k]) => !repositoryOnly.includes(k)));

/** Every example's programs, compiled once per set of compiler options the examples' tsconfigs give. */
const compiled = new Map<string, { file: string; message: string }[]>();
function diagnostics(exampleOptions: ts.CompilerOptions): { file: string; message: string }[] {
  const key = JSON.stringify(exampleOptions);
  if (!compiled.has(key)) {
    const files = typescriptExamples.flatMap((name) => {
      const dir = path.join(root, "examples", name);
      return [dir, ...fs.readdirSync(dir).map((d) => path.join(dir, d))]
        .map((d) => path.join(d, "index.ts"))
        .filter((f) => fs.existsSync(f));
    });
    // The package from this checkout's sources, where a user's project has it in node_modules.
    const options = {
      ...exampleOptions,
      noEmit: true,
      baseUrl: root,
      paths: { "pulumi-egress-ipam": ["./provider/index.ts"] },
    };
    const program = ts.createProgram(files, options);
    compiled.set(
      key,
      ts.getPreEmitDiagnostics(program).map((d) => ({
        file: d.file?.fileName ?? "",
        message: ts.flattenDiagnosticMessageText(d.messageText, "\n"),
      })),
    );
  }
  return compiled.get(key)!;
}

const typescriptExamples = exampleNames().filter((n) => exampleRuntime(n) === "nodejs");
const otherExamples = exampleNames().filter((n) => exampleRuntime(n) !== "nodejs");

it.each(exampleNames())("examples/%s is the project egress-ipam-<its folder>", (name) => {
  const text = fs.readFileSync(path.join(root, "examples", name, "Pulumi.yaml"), "utf8");
  expect(/^name:\s*(\S+)/m.exec(text)?.[1]).toBe(`egress-ipam-${name}`);
});

describe.each(typescriptExamples)("examples/%s as a project", (name) => {
  const dir = path.join(root, "examples", name);

  it("has a strict CommonJS tsconfig.json with the options the repository's typecheck uses", () => {
    const options = optionsOf(path.join(dir, "tsconfig.json"));
    expect(options.strict).toBe(true);
    expect(options.module).toBe(ts.ModuleKind.CommonJS);
    expect(withoutRepositoryOnly(options)).toEqual(
      withoutRepositoryOnly(optionsOf(path.join(root, "tsconfig.json"))),
    );
  });

  it("has typescript as a devDependency, in the repository's range", () => {
    expect(readJson(path.join(dir, "package.json")).devDependencies?.typescript).toBe(
      own.devDependencies.typescript,
    );
  });

  it("compiles under its own tsconfig.json, its steps too", () => {
    const programs = [dir, ...fs.readdirSync(dir).map((d) => path.join(dir, d))]
      .map((d) => path.join(d, "index.ts"))
      .filter((f) => fs.existsSync(f));
    const problems = diagnostics(optionsOf(path.join(dir, "tsconfig.json")))
      .filter((d) => d.file === "" || programs.includes(d.file))
      .map((d) => `${d.file}: ${d.message}`);
    expect(problems).toEqual([]);
  }, 120_000);
});

/** The files of an example and its steps whose name `keep` accepts, relative to the example. */
function filesOf(dir: string, keep: (file: string) => boolean): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => keep(path.basename(f))).sort();
}

describe.each(otherExamples)("examples/%s as a project of another language", (name) => {
  const dir = path.join(root, "examples", name);
  const runtime = exampleRuntime(name);
  const readme = () => fs.readFileSync(path.join(dir, "README.md"), "utf8");

  it("is a YAML or Python program, with none of a TypeScript project's files", () => {
    expect(["yaml", "python"]).toContain(runtime);
    expect(filesOf(dir, (f) => ["package.json", "tsconfig.json"].includes(f) || f.endsWith(".ts"))).toEqual(
      [],
    );
  });

  it("says in its README how to install the plugin of this version, and the Python SDK", () => {
    const version = own.version as string;
    expect(readme()).toContain(
      `pulumi plugin install resource egress-ipam ${version} -f dist/sdks/pulumi-resource-egress-ipam-v${version}-linux-x64.tar.gz`,
    );
    if (runtime === "python") {
      expect(readme()).toContain(`pulumi_egress_ipam-${version}-py3-none-any.whl`);
      expect(fs.readFileSync(path.join(dir, "requirements.txt"), "utf8")).toMatch(/^pulumi\b/m);
    }
  });

  it("sets only what the plugin's schema has (YAML), or parses (Python), its steps too", () => {
    if (runtime === "yaml") {
      const problems = filesOf(dir, (f) => f === "Pulumi.yaml").flatMap((file) => {
        const program = yamlProgram(fs.readFileSync(path.join(dir, file), "utf8"));
        if (!program) return [`${file}: no resources`];
        return yamlProblems(pluginSchema(), program).map((p) => `${file}: ${p}`);
      });
      expect(problems).toEqual([]);
    } else {
      const programs = filesOf(dir, (f) => f.endsWith(".py")).map((f) => path.join(dir, f));
      expect(programs.length).toBeGreaterThan(0);
      // The system python3 (a requirement of the checkout): a syntax error names its file and line.
      const parse = "import ast, sys\nfor f in sys.argv[1:]: ast.parse(open(f).read(), f)";
      execFileSync("python3", ["-c", parse, ...programs], { stdio: ["ignore", "ignore", "pipe"] });
    }
  });

  const base = name.replace(/-(yaml|python)$/, "");
  it.runIf(base !== name && fs.existsSync(path.join(root, "examples", base)))(
    `has the steps and stacks of examples/${base}`,
    () => {
      const layout = (d: string) =>
        filesOf(d, (f) => /^Pulumi\..+\.yaml$/.test(f)).concat(
          fs.readdirSync(d).filter((f) => /^step\d+$/.test(f)),
        );
      expect(layout(dir)).toEqual(layout(path.join(root, "examples", base)));
    },
  );
});
