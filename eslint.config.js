import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "src/web/dist/**", "coverage/**", "bench/.out/**", "docs/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        setImmediate: "readonly",
        Buffer: "readonly",
        URL: "readonly",
        AbortController: "readonly",
        AbortSignal: "readonly",
        fetch: "readonly",
        window: "readonly",
        document: "readonly",
        sessionStorage: "readonly",
        localStorage: "readonly",
        WebSocket: "readonly",
        location: "readonly",
        performance: "readonly",
        queueMicrotask: "readonly",
        structuredClone: "readonly",
      },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-constant-condition": ["error", { checkLoops: false }],
    },
  },
  {
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs", globals: { module: "writable", require: "readonly", __dirname: "readonly" } },
  },
  {
    // Engine.testSeam() (a tick now, the live context) and posixSpawn's testSeam (a failing exit watch) are for tests and benchmarks only.
    files: ["src/**/*.ts"],
    ignores: ["src/**/*.test.ts", "src/**/testkit.ts"],
    rules: {
      "no-restricted-properties": [
        "error",
        { property: "testSeam", message: "testSeam (Engine.testSeam(), posixSpawn's testSeam) is for tests and benchmarks: drive the engine through its clock and public operations." },
      ],
    },
  },
);
