import js from "@eslint/js";
import path from "node:path";
import tseslint from "typescript-eslint";
import { layerProblem, resolveSpecifier } from "./scripts/import-graph.mjs";

const nodeGlobals = Object.fromEntries(
  [
    "process",
    "console",
    "setTimeout",
    "clearTimeout",
    "Buffer",
    "URL",
    "globalThis",
    "performance",
    "gc",
  ].map((name) => [name, "readonly"]),
);

const sourceDir = path.join(import.meta.dirname, "provider");

/** `layers/downward-only`: an import (or require) in provider/ may not name a file of its layer or above. */
const downwardOnly = {
  meta: {
    type: "problem",
    schema: [],
    docs: { description: "imports in provider/ run down the layers only" },
  },
  create(context) {
    const check = (node, source) => {
      if (!source || source.type !== "Literal" || typeof source.value !== "string") return;
      if (!source.value.startsWith(".")) return;
      const target = resolveSpecifier(context.filename, source.value);
      const why = target && layerProblem(sourceDir, context.filename, target);
      if (why) context.report({ node: source, message: `import of "${source.value}": ${why}` });
    };
    return {
      ImportDeclaration: (n) => check(n, n.source),
      ExportNamedDeclaration: (n) => check(n, n.source),
      ExportAllDeclaration: (n) => check(n, n.source),
      ImportExpression: (n) => check(n, n.source),
      CallExpression: (n) => {
        if (n.callee.type === "Identifier" && n.callee.name === "require") check(n, n.arguments[0]);
      },
    };
  },
};

export default tseslint.config(
  { ignores: ["dist/", ".tools/", "node_modules/", "toolchain/", "examples/*/node_modules/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: nodeGlobals },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-require-imports": "off",
    },
  },
  {
    files: ["provider/**/*.ts"],
    plugins: { layers: { rules: { "downward-only": downwardOnly } } },
    rules: { "layers/downward-only": "error" },
  },
);
