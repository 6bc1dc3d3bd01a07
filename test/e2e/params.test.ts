/**
 * Run parameters through the built binaries (CONTRACT §7.2): `svc run -p`
 * and `--params-file` against a daemon started by `svc start`; typed values
 * reach the command and the env; every bad value is 422 validation_failed
 * with its `params.NAME` path and no run; the CLI prints the problems and
 * exits 1; secret values read *** in `svc export`, `svc history`, the audit.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseCsv } from "../../src/cli/client/csv.js";
import { sharedDaemon, waitRun, type RunRow } from "./helpers/daemonClient.js";

const YAML = `defaults:
  timezone: UTC
jobs:
  report:
    frequency: manual
    command: echo "day=[{{ params.day }}] limit=[{{ params.limit }}] ratio=[$SVC_PARAM_RATIO] dry=[{{ params.dry }}] mode=[$MODE] slot=[$SVC_SCHEDULED_AT] pin=[$SVC_PARAM_PIN]"
    env:
      MODE: "{{ params.mode }}"
    params:
      day: {pattern: "[0-9]{4}-[0-9]{2}-[0-9]{2}", description: the day to report}
      limit: {type: integer, default: 10}
      ratio: {type: number, default: 0.5}
      dry: {type: boolean, default: false}
      mode: {type: enum, values: [full, incremental], default: full}
      pin: {type: integer, secret: true, default: 1111}
`;

const { p } = sharedDaemon({ "svc.yaml": YAML });

async function lines(id: number): Promise<string[]> {
  const r = await p.api<{ lines: { line: string }[] }>("GET", `/api/runs/${id}/logs`);
  return r.body.lines.map((l) => l.line).filter((l) => !l.startsWith("--- attempt"));
}

describe("svc run -p / --params-file", () => {
  it("converts -p values by the declared types; they reach the command and the env", async () => {
    const r = await p.svc(["run", "report", "-p", "day=2026-11-01", "-p", "limit=25", "-p", "dry=true", "-p", "ratio=0.75", "-p", "pin=4321", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const started = JSON.parse(r.stdout) as { run_id: number };
    const run = await waitRun(p, started.run_id);
    expect(run.status).toBe("SUCCESS");
    expect(run.params).toEqual({ day: "2026-11-01", limit: 25, ratio: 0.75, dry: true, mode: "full", pin: "***" });
    expect(run.scheduled_at).toBeNull();
    expect(await lines(run.id)).toEqual(["day=[2026-11-01] limit=[25] ratio=[0.75] dry=[true] mode=[full] slot=[] pin=[4321]"]);
  });

  it("--params-file gives typed JSON values; -p wins for the same name", async () => {
    writeFileSync(join(p.dir, "params.json"), JSON.stringify({ day: "2026-12-24", mode: "incremental", limit: 3 }));
    const r = await p.svc(["run", "report", "--params-file", "params.json", "-p", "limit=4", "--wait"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("day=[2026-12-24] limit=[4] ratio=[0.5] dry=[false] mode=[incremental]");
  });

  it("bad values: the CLI prints every problem with its path and exits 1; no run is created", async () => {
    const before = (await p.api<{ total: number }>("GET", "/api/audit?job=report")).body.total;
    const r = await p.svc(["run", "report", "-p", "day=soon", "-p", "limit=ten", "-p", "colour=red"]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/params\.day must match the pattern/);
    expect(r.stderr).toMatch(/params\.limit must be an integer \(got "ten"\)/);
    expect(r.stderr).toMatch(/params\.colour unknown param "colour"/);
    expect((await p.api<{ total: number }>("GET", "/api/audit?job=report")).body.total).toBe(before);
  });

  it("usage errors: -p without =, a name given twice, -p with --tag (exit 2)", async () => {
    for (const args of [["-p", "day"], ["-p", "day=1", "-p", "day=2"]]) {
      const r = await p.svc(["run", "report", ...args]);
      expect(r.code, args.join(" ")).toBe(2);
    }
    expect((await p.svc(["run", "--tag", "x", "-p", "a=1"])).code).toBe(2);
  });
});

describe("POST /api/jobs/report/run: every bad param is 422 with its path", () => {
  it.each([
    [{ day: "2026-11-01", nope: 1 }, "params.nope"],
    [{ day: "2026-11-01", limit: "10" }, "params.limit"],
    [{ day: "2026-11-01", limit: 2.5 }, "params.limit"],
    [{ day: "2026-11-01", ratio: "x" }, "params.ratio"],
    [{ day: "2026-11-01", dry: 1 }, "params.dry"],
    [{ day: "2026-11-01", mode: "other" }, "params.mode"],
    [{ day: "11/01/2026" }, "params.day"],
    [{ day: 20261101 }, "params.day"],
    [{}, "params.day"],
    ["day=2026-11-01", "params"],
  ])("%j -> %s", async (params, path) => {
    const r = await p.api<{ error: { code: string; details: { path: string }[] } }>("POST", "/api/jobs/report/run", { params });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("validation_failed");
    expect(r.body.error.details.map((d) => d.path)).toEqual([path]);
  });
});

describe("params in the views", () => {
  it("svc history, svc audit --param, svc export show them; the secret reads ***", async () => {
    const r = await p.svc(["run", "report", "-p", "day=2031-01-01", "-p", "pin=987654", "--wait"]);
    expect(r.code, r.stderr).toBe(0);
    const history = await p.svc(["history", "report", "--last", "1"]);
    expect(history.stdout).toContain("day=2031-01-01 limit=10 ratio=0.5 dry=false mode=full"); // the cell ends at 60 characters
    expect(history.stdout).not.toContain("987654");
    const audit = await p.svc(["audit", "--param", "day=2031-01-01", "--json"]);
    const runs = (JSON.parse(audit.stdout) as { runs: RunRow[] }).runs;
    expect(runs).toHaveLength(1);
    expect(runs[0]!.params).toMatchObject({ day: "2031-01-01", pin: "***" });
    expect((await p.svc(["audit", "--param", "pin=987654", "--json"])).stdout).toContain('"total": 0');
    // The CSV export: the params as JSON in their own column, the secret ***.
    const csv = await p.svc(["audit", "--param", "day=2031-01-01", "--export", "csv"]);
    const [header, row] = parseCsv(csv.stdout);
    const params = JSON.parse(row![header!.indexOf("params")]!) as Record<string, unknown>;
    expect(params).toMatchObject({ day: "2031-01-01", pin: "***" });
    expect(row![header!.indexOf("scheduled_at")]).toBe("");
    expect(csv.stdout).not.toContain("987654");
    const exported = await p.svc(["export"]);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toContain('"day": "2031-01-01"');
    expect(exported.stdout).not.toContain("987654");
    expect(exported.stdout).not.toContain("1111"); // the secret default, in the config part
    const show = await p.svc(["config", "show", "--json"]);
    expect(show.stdout).not.toContain("1111");
  });
});
