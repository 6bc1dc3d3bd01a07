/**
 * A sub-minute schedule in the real daemon (the built svcd, the real clock):
 * `every:2s` makes one run per slot, each slot on an even second, no slot
 * twice and none skipped between the first and the last; an excluded date
 * makes no run. Latency figures live in the benchmarks, not here: this
 * checks only which slots got runs.
 */
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, startDaemon, until, type DaemonProc } from "../helpers/daemonKit.js";

let d: DaemonProc | null = null;
let dir: string | null = null;
afterAll(async () => {
  await d?.stop();
  if (dir) cleanup(dir);
});

interface Run {
  job_name: string;
  scheduled_for: string | null;
  trigger: string;
}

describe("every:2s in svcd", () => {
  it("one run per slot, on even seconds, consecutive, and nothing for an excluded job", { timeout: 90_000 }, async () => {
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    dir = project(`
defaults:
  timezone: UTC
jobs:
  pulse:
    command: "true"
    frequency: "every:2s"
    concurrency: allow
  quiet:
    command: "true"
    frequency: "every:2s"
    exclude: {dates: ["${today}", "${tomorrow}"]}
`);
    d = await startDaemon(dir);
    const runs = await until(
      "6 runs of pulse",
      async () => {
        const r = await d!.api<{ runs: Run[] }>("GET", "/api/jobs/pulse?runs=100");
        return r.body.runs.length >= 6 ? r.body.runs : null;
      },
      60_000,
    );
    const slots = runs.map((r) => Date.parse(r.scheduled_for!)).sort((a, b) => a - b);
    expect(runs.every((r) => r.trigger === "schedule")).toBe(true);
    expect(new Set(slots).size).toBe(slots.length);
    for (const s of slots) expect(s % 2000).toBe(0);
    for (let i = 1; i < slots.length; i++) expect(slots[i]! - slots[i - 1]!).toBe(2000);
    const quiet = await d.api<{ runs: Run[]; state: { next_run: string | null } }>("GET", "/api/jobs/quiet?runs=10");
    expect(quiet.body.runs).toEqual([]);
    expect(quiet.body.state.next_run!.slice(0, 10) > tomorrow).toBe(true);
    expect(d.output()).toMatch(/job quiet: slot \S+ \([^)]*\) excluded \(\d{4}-\d{2}-\d{2} in exclude\.dates\): no run/);
  });
});
