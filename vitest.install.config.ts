import { defineConfig } from "vitest/config";

/**
 * `npm run test:install`: the newcomer test (test/install/), alone. It packs
 * svc and installs the tarball with `npm install -g` as a user would, which
 * compiles better-sqlite3 and svc's binding from source (~90 s of CPU on
 * 2 cores), so it is not part of `npm test`; .ci/run runs it after `npm test`.
 */
export default defineConfig({
  test: {
    include: ["test/install/**/*.test.ts"],
    pool: "forks",
    testTimeout: 20 * 60_000,
    hookTimeout: 60_000,
  },
});
