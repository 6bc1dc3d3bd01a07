import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["src/web/**", "node_modules/**", "dist/**"],
    pool: "forks",
    // The default output, then one line saying what was skipped and why.
    reporters: ["default", "./test/helpers/skipSummary.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    teardownTimeout: 10_000,
  },
});
