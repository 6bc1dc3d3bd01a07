/**
 * Backfill through the built binaries (CONTRACT §7.3), a daemon started by
 * `svc start`: a DST week in America/New_York gives exactly the slots
 * `svc next` lists, run oldest first one at a time under forbid, each with its
 * own SVC_SCHEDULED_AT; extract -> transform over 5 days gives 5 cycles, each
 * transform with its own extract's output; SIGKILL of svcd mid-backfill and a
 * restart end every slot with exactly one run.
 */
import { describe, expect, it } from "vitest";
import { EXTRACT_TRANSFORM_JOBS } from "../helpers/backfillJobs.js";
import { alive, sharedDaemon, until, type RunRow } from "./helpers/daemonClient.js";

const YAML = `jobs:
  nightly:
    command: echo "slot=$SVC_SCHEDULED_AT"; sleep 0.2
    frequency: daily
    time: "0230"
    timezone: America/New_York
    concurrency: forbid
${EXTRACT_TRANSFORM_JOBS}  slow:
    command: sleep 0.4
    frequency: hourly
    timezone: UTC
    retries: 1
    retry_delay: fixed:1s
`;

const { p } = sharedDaemon({ "svc.yaml": YAML });

async function runsOf(backfillId: number): Promise<RunRow[]> {
  const r = await p.api<{ runs: RunRow[] }>("GET", `/api/audit?backfill_id=${backfillId}&limit=1000`);
  return r.body.runs.sort((a, b) => a.id - b.id);
}

async function logOf(id: number): Promise<string[]> {
  const r = await p.api<{ lines: { line: string }[] }>("GET", `/api/runs/${id}/logs`);
  return r.body.lines.map((l) => l.line);
}

describe("svc backfill", () => {
  it("a DST week in New York: the slots svc next lists, oldest first, one at a time, each with its SVC_SCHEDULED_AT", async () => {
    const from = "2025-03-05T00:00:00Z";
    const to = "2025-03-12T00:00:00Z";
    const next = await p.svc(["next", "nightly", "--from", from, "--count", "20", "--json"]);
    const expected = (JSON.parse(next.stdout) as { runs: { utc: string; note: string | null }[] }).runs.filter((r) => Date.parse(r.utc) < Date.parse(to));
    expect(expected).toHaveLength(7);
    expect(expected.some((r) => r.note !== null)).toBe(true); // 02:30 on 14 March does not exist

    const dry = await p.svc(["backfill", "nightly", "--from", from, "--to", to, "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    const lines = dry.stdout.trim().split("\n");
    expect(lines.slice(0, 7).map((l) => l.split(/\s+/)[0])).toEqual(expected.map((r) => r.utc));
    expect(lines.find((l) => l.startsWith("2025-03-09T07:00:00.000Z"))).toMatch(/2025-03-09T03:00:00-04:00 EDT\s+\(.*does not exist.*\)\s+run$/);
    expect(lines[7]).toBe("7 slots of nightly (America/New_York); 7 would run");

    const r = await p.svc(["backfill", "nightly", "--from", from, "--to", to, "--wait"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^svc: backfill \d+ of nightly: 7 runs for 7 slots$/m);
    expect(r.stderr).toMatch(/backfill \d+ of nightly: 7\/7 done \(7 ok, 0 failed, 0 skipped\), 0 running/);
    const id = Number(/backfill (\d+) of nightly/.exec(r.stderr)![1]);
    const runs = await runsOf(id);
    expect(runs.map((x) => x.scheduled_at)).toEqual(expected.map((x) => x.utc));
    expect(runs.every((x) => x.status === "SUCCESS" && x.trigger === "backfill")).toBe(true);
    const byStart = [...runs].sort((a, b) => Date.parse(String(a.started_at)) - Date.parse(String(b.started_at)));
    expect(byStart.map((x) => x.scheduled_at)).toEqual(expected.map((x) => x.utc));
    byStart.forEach((x, i) => {
      if (i > 0) expect(Date.parse(String(x.started_at))).toBeGreaterThanOrEqual(Date.parse(String(byStart[i - 1]!.finished_at)));
    });
    for (const x of runs) expect(await logOf(x.id)).toContain(`slot=${x.scheduled_at}`);

    // A second backfill of the same range leaves every slot alone.
    const again = await p.svc(["backfill", "nightly", "--from", from, "--to", to, "--json"]);
    expect(JSON.parse(again.stdout)).toMatchObject({ slots: 7, runs: 0, existing: 7 });
    const audit = await p.svc(["audit", "--trigger", "backfill", "--job", "nightly", "--json"]);
    expect((JSON.parse(audit.stdout) as { total: number }).total).toBe(7);
  });

  it("extract -> transform over 5 days: 5 cycles, each transform sees its own extract's output", async () => {
    const r = await p.svc(["backfill", "extract", "--from", "2025-01-01", "--to", "2025-01-06", "--wait", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const b = JSON.parse(r.stdout) as { id: number; total: number; by_status: Record<string, number> };
    expect(b.total).toBe(5);
    const runs = await until("5 transforms done", async () => {
      const all = await runsOf(b.id);
      const t = all.filter((x) => x.job_name === "transform");
      return t.length === 5 && t.every((x) => x.status === "SUCCESS") ? all : null;
    });
    const extracts = runs.filter((x) => x.job_name === "extract");
    expect(new Set(extracts.map((x) => x.cycle_id)).size).toBe(5);
    for (const t of runs.filter((x) => x.job_name === "transform")) {
      const root = extracts.find((x) => x.cycle_id === t.cycle_id)!;
      expect(t.scheduled_at).toBe(root.scheduled_at);
      expect(await logOf(t.id)).toContain(`transform of ${root.scheduled_at} at ${root.scheduled_at}`);
    }
  });

  it("SIGKILL of the daemon mid-backfill, restart: every slot ends with exactly one run, none twice", async () => {
    const r = await p.svc(["backfill", "slow", "--from", "2025-02-01T00:00:00Z", "--to", "2025-02-01T10:00:00Z", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const id = (JSON.parse(r.stdout) as { backfill_id: number }).backfill_id;
    await until("3 runs done and one running", async () => {
      const runs = await runsOf(id);
      return runs.filter((x) => x.status === "SUCCESS").length >= 3 && runs.some((x) => x.status === "RUNNING");
    });
    const pid = p.pid()!;
    process.kill(pid, "SIGKILL");
    await until("svcd to die", () => !alive(pid));
    // ...and to be reaped: until then its pid lock reads as a live daemon.
    await until("svcd to be reaped", () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    }, 20_000);
    await p.start();
    const done = await until(
      "the backfill to finish after the restart",
      async () => {
        const b = await p.api<{ done: boolean; by_status: Record<string, number> }>("GET", `/api/backfills/${id}`);
        return b.body.done ? b.body : null;
      },
      60_000,
    );
    expect(done.by_status.SUCCESS).toBe(10);
    const runs = await runsOf(id);
    expect(runs).toHaveLength(10);
    expect(runs.map((x) => x.scheduled_at)).toEqual(Array.from({ length: 10 }, (_, i) => `2025-02-01T${String(i).padStart(2, "0")}:00:00.000Z`));
    // the run that was RUNNING at the kill was lost and retried on its own row
    expect(runs.some((x) => x.attempt === 2)).toBe(true);
  });

  it("svc backfills lists them; show and cancel; usage errors exit 2", async () => {
    const started = await p.svc(["backfill", "slow", "--from", "2025-03-01T00:00:00Z", "--to", "2025-03-01T12:00:00Z", "--json"]);
    const id = (JSON.parse(started.stdout) as { backfill_id: number }).backfill_id;
    const list = await p.svc(["backfills", "--json"]);
    expect((JSON.parse(list.stdout) as { backfills: { id: number }[] }).backfills[0]!.id).toBe(id);
    expect((await p.svc(["backfills"])).stdout).toMatch(new RegExp(`^${id}\\s+slow\\s+2025-03-01T00:00:00.000Z`, "m"));
    const cancel = await p.svc(["backfills", "cancel", String(id)]);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(cancel.stdout).toMatch(new RegExp(`^cancelled backfill ${id} of slow: \\d+ waiting runs? skipped`));
    const show = await p.svc(["backfills", "show", String(id), "--wait"]);
    expect(show.code, show.stdout + show.stderr).toBe(1); // cancelled: not every run succeeded
    expect((await p.svc(["backfills", "cancel", String(id)])).code).toBe(1);
    const exported = JSON.parse((await p.svc(["export"])).stdout) as { backfills: { id: number; cancelled: boolean }[] };
    expect(exported.backfills.find((b) => b.id === id)).toMatchObject({ cancelled: true });
    expect((await p.svc(["backfill", "slow", "--from", "soon", "--to", "2025-01-01"])).code).toBe(2);
    expect((await p.svc(["backfill", "slow", "--from", "2025-01-01"])).code).toBe(2);
    const bad = await p.svc(["backfill", "slow", "--from", "2024-01-01", "--to", "2025-03-01"]); // 10,200 hourly slots
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^svc: job slow: to the range holds more than 10,000 slots of job slow/);
  });

  it("a range reaching past now: the dry run lists the past slots and says the later ones are the scheduler's; all ahead is exit 1 naming --from", async () => {
    const day = 86_400_000;
    const today = Math.floor(Date.now() / day) * day;
    const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const r = await p.svc(["backfill", "nightly", "--from", iso(today - 3 * day), "--to", iso(today + 4 * day), "--dry-run"]);
    expect(r.code, r.stderr).toBe(0);
    const slots = r.stdout.split("\n").filter((l) => /^\d{4}-/.test(l)).map((l) => Date.parse(l.slice(0, 24)));
    expect(slots.length).toBeGreaterThanOrEqual(2);
    expect(slots.every((t) => t <= Date.now())).toBe(true);
    expect(r.stdout).toMatch(/would run; [1-9]\d* later slots? of the range (is|are) still ahead and left to the scheduler\n$/);
    const ahead = await p.svc(["backfill", "nightly", "--from", iso(today + 2 * day), "--to", iso(today + 4 * day)]);
    expect(ahead.code).toBe(1);
    expect(ahead.stderr).toMatch(/from every slot of the range is still ahead \(the first: \d{4}-.*\), and the scheduler runs those at their time/);
  });
});
