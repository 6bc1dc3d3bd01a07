import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // test/install/ runs on its own: npm run test:install (vitest.install.config.ts).
    exclude: ["src/web/**", "node_modules/**", "dist/**", "test/install/**"],
    pool: "forks",
    // The default output, then one line saying what was skipped and why.
    reporters: ["default", "./test/helpers/skipSummary.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    teardownTimeout: 10_000,
  },
});
