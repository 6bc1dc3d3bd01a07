/**
 * `svc service install|uninstall` through the built `svc`: the unit it
 * writes passes `systemd-analyze verify` (systemd is installed here even
 * where it is not PID 1), stops the way DEPLOY.md says, and points at this
 * checkout's bin/svcd and the project's svc.yaml.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IN_CI } from "../helpers/skip.js";
import { ROOT, runSvc } from "./helpers/cli.js";

const ANALYZE = "/usr/bin/systemd-analyze";
const haveAnalyze = existsSync(ANALYZE);
/** The note of the tests whose verify step cannot run (the summary line of `npm test` prints it). */
const NO_ANALYZE = `needs ${ANALYZE} for the verify steps (apt-get install systemd)`;
if (!haveAnalyze && IN_CI) throw new Error("systemd-analyze is missing: CI must have systemd installed (it checks the unit svc writes)");

/** systemd-analyze verify on a unit file; every line it prints about our unit is a problem. */
function verify(file: string, scope: "user" | "system"): { code: number | null; problems: string[] } {
  const runtime = mkdtempSync(join(tmpdir(), "svc-xdg-"));
  try {
    const r = spawnSync(ANALYZE, ["verify", ...(scope === "user" ? ["--user"] : []), file], {
      encoding: "utf8",
      env: { ...process.env, XDG_RUNTIME_DIR: runtime, SYSTEMD_LOG_LEVEL: "notice" },
      timeout: 60_000,
    });
    const name = file.split("/").pop()!;
    const problems = `${r.stdout}\n${r.stderr}`.split("\n").filter((l) => l.includes(name) || l.includes(file));
    return { code: r.status, problems };
  } finally {
    rmSync(runtime, { recursive: true, force: true });
  }
}

describe("svc service", () => {
  let base: string;
  let dir: string;
  let home: string;

  beforeAll(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), "svc-service-")));
    // A directory name with a space, a % and a $: each needs escaping in a unit file ($ only in ExecStart, which substitutes variables).
    dir = join(base, "etl jobs 100% ${USER}");
    mkdirSync(dir);
    writeFileSync(join(dir, "svc.yaml"), 'jobs:\n  a:\n    command: "true"\n');
    writeFileSync(join(dir, "svcd.yaml"), "scheduler:\n  shutdown_timeout: 2m\nexecutor:\n  kill_grace: 15s\n");
    home = join(base, "home");
    mkdirSync(home);
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  const svc = (args: string[]) => runSvc(args, { cwd: dir, env: { HOME: home, XDG_CONFIG_HOME: undefined } });

  it("prints a user unit that passes systemd-analyze verify and stops the way DEPLOY.md says", async (ctx) => {
    const r = await svc(["service", "install", "--user", "--print"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const unit = r.stdout;
    const lines = unit.split("\n");
    expect(lines).toContain(`ExecStart=${realpathSync(join(ROOT, "bin", "svcd"))} -c "${join(dir, "svc.yaml").replace("%", "%%").replace("$", "$$$$")}"`);
    expect(lines).toContain(`WorkingDirectory=${dir.replace("%", "%%")}`);
    expect(lines).toContain("ExecReload=/bin/kill -HUP $MAINPID");
    expect(lines).toContain("Restart=on-failure");
    expect(lines).toContain("KillMode=mixed");
    expect(lines).toContain("TimeoutStopSec=165s"); // shutdown_timeout 120 s + kill_grace 15 s + 30 s
    expect(lines).toContain(`Environment=PATH=${[...new Set([dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"])].join(":")}`);
    expect(lines).toContain("WantedBy=default.target");
    expect(lines.some((l) => l.startsWith("User="))).toBe(false);
    expect(existsSync(join(home, ".config", "systemd"))).toBe(false); // --print writes nothing

    ctx.skip(!haveAnalyze, NO_ANALYZE);
    const file = join(base, "svc-print.service");
    writeFileSync(file, unit);
    const v = verify(file, "user");
    expect(v.problems).toEqual([]);
    expect(v.code).toBe(0);
  });

  it("a system unit names the owner of svc.yaml and also verifies", async (ctx) => {
    const r = await svc(["service", "install", "--system", "--print"]);
    expect(r.code).toBe(0);
    const user = spawnSync("id", ["-un"], { encoding: "utf8" }).stdout.trim();
    expect(r.stdout.split("\n")).toContain(`User=${user}`);
    expect(r.stdout).toContain("WantedBy=multi-user.target");
    ctx.skip(!haveAnalyze, NO_ANALYZE);
    const file = join(base, "svc-system.service");
    writeFileSync(file, r.stdout);
    const v = verify(file, "system");
    expect(v.problems).toEqual([]);
    expect(v.code).toBe(0);
  });

  it("a broken unit fails the same check (the check can fail)", (ctx) => {
    ctx.skip(!haveAnalyze, NO_ANALYZE);
    const file = join(base, "svc-broken.service");
    writeFileSync(file, "[Service]\nExecStart=/nonexistent/svcd -c /x/svc.yaml\nKillMode=sometimes\n");
    const v = verify(file, "user");
    expect(v.problems.join("\n")).toMatch(/kill mode|not executable|No such file/i);
  });

  it("installs under ~/.config/systemd/user and uninstalls, removing an enable symlink too", async () => {
    // --user explicitly: the tests may run as root, where the default is a system unit in /etc.
    const r = await svc(["service", "install", "--user"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const unitDir = join(home, ".config", "systemd", "user");
    const file = join(unitDir, "svc-etl-jobs-100-USER.service");
    expect(r.stdout).toContain(`wrote ${file}`);
    expect(r.stdout).toContain("systemctl --user enable --now svc-etl-jobs-100-USER.service");
    expect(readFileSync(file, "utf8")).toBe((await svc(["service", "install", "--user", "--print"])).stdout);
    expect((await svc(["service", "install", "--user"])).stdout).toContain(`updated ${file}`);

    // What `systemctl --user enable` leaves behind.
    mkdirSync(join(unitDir, "default.target.wants"));
    symlinkSync(file, join(unitDir, "default.target.wants", "svc-etl-jobs-100-USER.service"));
    const u = await svc(["service", "uninstall", "--user"]);
    expect(u.code).toBe(0);
    expect(u.stdout).toContain(`removed ${file}`);
    expect(existsSync(file)).toBe(false);
    expect(existsSync(join(unitDir, "default.target.wants", "svc-etl-jobs-100-USER.service"))).toBe(false);

    const again = await svc(["service", "uninstall", "--user"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`svc: no unit svc-etl-jobs-100-USER.service in ${unitDir} (see \`svc service install\`; --name if it was installed under another name)\n`);
  });

  it("refuses --user with --system (usage error)", async () => {
    const r = await svc(["service", "install", "--user", "--system"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--user and --system exclude each other");
  });
});
