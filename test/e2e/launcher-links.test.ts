/**
 * bin/svcd, the launcher, found through symlinks the way package managers install it
 * (node_modules/.bin/svcd -> ../svc/bin/svcd, pnpm's second link), on a system whose
 * readlink has no -f (macOS before 12.3, busybox): a readlink on PATH that refuses -f.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = resolve(new URL("../..", import.meta.url).pathname);
const tmp = mkdtempSync(join(tmpdir(), "svc-launcher-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("bin/svcd through symlinks, without readlink -f", () => {
  it("finds bin/svcd.js through a relative and an absolute link", () => {
    // node_modules/svc -> the checkout (absolute); node_modules/.bin/svcd -> ../svc/bin/svcd (relative); a pnpm-like link to that.
    const nm = join(tmp, "node_modules");
    mkdirSync(join(nm, ".bin"), { recursive: true });
    symlinkSync(ROOT, join(nm, "svc"));
    symlinkSync("../svc/bin/svcd", join(nm, ".bin", "svcd"));
    symlinkSync(join(nm, ".bin", "svcd"), join(tmp, "svcd"));
    // A readlink that refuses -f, first on PATH.
    const shims = join(tmp, "shims");
    mkdirSync(shims);
    writeFileSync(join(shims, "readlink"), `#!/bin/sh\nif [ "$1" = "-f" ]; then echo "readlink: illegal option -- f" >&2; exit 1; fi\nexec /usr/bin/readlink "$@"\n`);
    chmodSync(join(shims, "readlink"), 0o755);
    const env = { ...process.env, PATH: `${shims}:${process.env.PATH}` };
    expect(spawnSync(join(shims, "readlink"), ["-f", "/"], { env }).status).toBe(1); // the shim works

    for (const launcher of [join(nm, ".bin", "svcd"), join(tmp, "svcd")]) {
      const r = spawnSync("sh", [launcher, "--help"], { env, encoding: "utf8", timeout: 30_000 });
      expect(r.stderr).toBe("");
      expect(r.stdout).toContain("Usage: svc daemon run");
      expect(r.status).toBe(0);
    }
  });
});
