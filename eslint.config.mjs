import js from "@eslint/js";
import tseslint from "typescript-eslint";

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
);
