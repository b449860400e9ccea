// Every example is a project as users build it: its own tsconfig.json (the compiler options the
// repository's typecheck gives examples/*/index.ts, which Pulumi's ts-node reads at preview), a
// typescript devDependency of the repository's range, and a program (and steps) that compile under
// that tsconfig alone.
import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { exampleNames } from "../support/example-project";

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
// (`types: ["node"]`, the path mapping of the package to provider/), and declaration output.
const repositoryOnly = [
  "types",
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
    const files = exampleNames().flatMap((name) => {
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

describe.each(exampleNames())("examples/%s as a project", (name) => {
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
