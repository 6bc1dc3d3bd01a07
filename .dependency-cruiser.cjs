/**
 * Import rules that check themselves (`npm run lint` runs `depcruise`; docs/ARCHITECTURE.md
 * lists them; test/lint/boundaries.test.ts checks that a breach fails the lint).
 */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "Modules form no import cycle (type-only imports count too: a cycle of types is a cycle of concepts).",
      severity: "error",
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: ["^src/web/", "^dist/"] },
  },
};
