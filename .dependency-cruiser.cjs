/**
 * The import rules of docs/ARCHITECTURE.md, checked: `npm run lint` runs
 * `depcruise src test bench` with this file and fails on any breach, and
 * test/lint/boundaries.test.ts checks that a deliberately wrong import of each
 * kind fails it. Test files (`*.test.ts`, `testkit.ts`, test/, bench/) may
 * import what they test from anywhere.
 */
const TEST = "(\\.test\\.tsx?$|(^|/)testkit\\.ts$|^test/|^bench/)";

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "Modules form no import cycle (type-only imports count too: a cycle of types is a cycle of concepts).",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "sqlite-only-in-store",
      comment: "Only src/store opens SQLite and holds SQL (STYLE): everyone else goes through the store's typed functions.",
      severity: "error",
      from: { path: "^src/", pathNot: ["^src/store/", TEST] },
      to: { path: "(^|/)node_modules/better-sqlite3/" },
    },
    {
      name: "schedule-graph-pure",
      comment: "schedule/ and graph/ are pure: they import only config/types, each other's own folder and pure libraries (no I/O module).",
      severity: "error",
      from: { path: "^src/(schedule|graph)/", pathNot: TEST },
      to: { path: "^src/", pathNot: ["^src/config/types\\.ts$", "^src/$1/"] },
    },
    {
      name: "schedule-graph-no-io",
      comment: "schedule/ and graph/ read no file, socket or process: `now` and file contents are passed in.",
      severity: "error",
      from: { path: "^src/(schedule|graph)/", pathNot: TEST },
      to: { dependencyTypes: ["core"], pathNot: "^(node:)?module$" },
    },
    {
      name: "api-cli-read-only-store",
      comment:
        "api/ and cli/ see the store through its read-only type (store/api.ts ReadStore) and ask the engine for every change: " +
        "they import the store's interface, row types, errors and run-status helpers, never its implementation. " +
        "backup.ts is the exception: `svc backup`/`svc restore` copy the database file offline, with the daemon stopped.",
      severity: "error",
      from: { path: "^src/(api|cli)/", pathNot: TEST },
      to: { path: "^src/store/", pathNot: "^src/store/(api|types|errors|runStatus|timeline|backup)\\.ts$" },
    },
    {
      name: "api-cli-no-engine-internals",
      comment:
        "api/ and cli/ use the engine's public face (engine.ts, its errors, events and pure helpers such as gate.ts), " +
        "never the machinery that changes state: its context, queue, recorder, effects, attempts or recovery.",
      severity: "error",
      from: { path: "^src/(api|cli)/", pathNot: TEST },
      to: { path: "^src/engine/(context|dispatcher|recorder|turnWrites|apply|facts|attempt|prepare|recovery)\\.ts$" },
    },
    {
      name: "config-not-notify",
      comment: "config/ comes first in the flow (config -> plan -> dispatch -> execute -> record -> tell): it imports nothing of notify/.",
      severity: "error",
      from: { path: "^src/config/", pathNot: TEST },
      to: { path: "^src/notify/" },
    },
    {
      name: "test-support-only-in-tests",
      comment: "Test support (testkit.ts, test/helpers) is imported by tests only, and is not shipped (tsconfig.build.json excludes src/**/testkit.ts).",
      severity: "error",
      from: { pathNot: TEST },
      to: { path: "((^|/)testkit\\.ts$|^test/)" },
    },
  ],
  options: {
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: ["^src/web/", "^dist/"] },
  },
};
