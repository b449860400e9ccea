// Type-checks TypeScript code blocks as a user's program: each block is a module of its own that
// imports the package by its public names (`pulumi-egress-ipam` and the sub-paths package.json
// exports), mapped to the sources under provider/.
import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import { repoRoot } from "./markdown";

/** A block to compile: where it is (for messages) and its code. */
export interface Snippet {
  file: string;
  line: number;
  code: string;
}

/**
 * `paths` for the package's exports: `pulumi-egress-ipam` → provider/index.ts, and each sub-path
 * whose types are `./dist/<x>.d.ts` → provider/<x>.ts (a `*` pattern maps to a `*` pattern). A
 * sub-path package.json does not export does not resolve, as for a user.
 */
export function exportPaths(): Record<string, string[]> {
  const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")) as {
    name: string;
    exports: Record<string, string | { types?: string }>;
  };
  const paths: Record<string, string[]> = {};
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    const types = typeof target === "string" ? undefined : target.types;
    const source = types && /^\.\/dist\/(.+)\.d\.ts$/.exec(types)?.[1];
    if (!source) continue; // ./package.json
    const name = subpath === "." ? pkg.name : `${pkg.name}/${subpath.slice(2)}`;
    paths[name] = [path.join(repoRoot, "provider", `${source}.ts`)];
  }
  return paths;
}

/**
 * The type errors of each snippet, as `file:line: message` with the line in the Markdown file.
 * Compiled with the repository's strict compiler options, one program for all snippets.
 */
export function typeErrors(snippets: Snippet[]): string[] {
  const config = ts.readConfigFile(path.join(repoRoot, "tsconfig.json"), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, repoRoot);
  delete options.baseUrl; // a user's program does not resolve bare names from this repository's root
  const compilerOptions: ts.CompilerOptions = { ...options, paths: exportPaths(), noEmit: true };

  // Virtual files at the repository root, so `@pulumi/pulumi` resolves from its node_modules.
  const virtual = new Map(
    snippets.map((s, i) => [
      path.join(repoRoot, `.doc-block-${i}.ts`),
      { snippet: s, code: `${s.code}\nexport {};\n` },
    ]),
  );
  const host = ts.createCompilerHost(compilerOptions);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (f) => virtual.has(f) || fileExists.call(host, f);
  host.readFile = (f) => virtual.get(f)?.code ?? readFile.call(host, f);
  host.getSourceFile = (f, language, ...rest) => {
    const v = virtual.get(f);
    return v
      ? ts.createSourceFile(f, v.code, language, true)
      : getSourceFile.call(host, f, language, ...rest);
  };
  const program = ts.createProgram([...virtual.keys()], compilerOptions, host);
  const diagnostics = [...program.getSyntacticDiagnostics(), ...program.getSemanticDiagnostics()];
  return diagnostics.map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, "\n");
    const v = d.file && virtual.get(d.file.fileName);
    if (!v || d.start === undefined) return `${d.file?.fileName ?? "(options)"}: ${message}`;
    const { line } = d.file!.getLineAndCharacterOfPosition(d.start);
    return `${v.snippet.file}:${v.snippet.line + line}: ${message}`;
  });
}
