/**
 * Generated svc.yaml files for the scale and dispatch benchmarks.
 *
 * The idle jobs are a realistic mix (daily, weekdays, weekly, monthly,
 * manual, after: chains, tags, descriptions, a few zones), with every
 * wall-clock time placed 3 to 21 hours away from `now` in UTC so that none of
 * them fires while a benchmark measures an idle daemon. `hourly` is left out
 * for the same reason (it fires at every :00).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo", "Asia/Kolkata"];
const ZONE_OFFSET_H: Record<string, number> = { UTC: 0, "Europe/Berlin": 1, "America/New_York": -5, "Asia/Tokyo": 9, "Asia/Kolkata": 5.5 };
const WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
const TAGS = ["etl", "nightly", "reports", "billing", "backup", "ml", "ops", "web"];

const pad2 = (n: number): string => String(n).padStart(2, "0");

/** HHMM in `zone` for an instant `hoursAhead` after `now` (approximate offsets: only "far from now" matters). */
function timeAhead(now: Date, hoursAhead: number, zone: string, minute: number): string {
  const utcH = now.getUTCHours() + now.getUTCMinutes() / 60 + hoursAhead + (ZONE_OFFSET_H[zone] ?? 0);
  const h = ((Math.floor(utcH) % 24) + 24) % 24;
  return `${pad2(h)}${pad2(minute % 60)}`;
}

/** YAML for `n` idle jobs (about 100 bytes each: 5 MB at 50,000), names `job-00001`... */
export function idleJobsYaml(n: number, now = new Date()): string {
  const width = String(n).length;
  const out: string[] = [];
  for (let i = 1; i <= n; i++) {
    const name = `job-${String(i).padStart(width, "0")}`;
    const zone = ZONES[i % ZONES.length]!;
    const time = timeAhead(now, 3 + ((i * 7) % 18), zone, (i * 13) % 60);
    const tags = `[${TAGS[i % TAGS.length]}, ${TAGS[(i * 3 + 1) % TAGS.length]}]`;
    out.push(`  ${name}:`);
    if (i % 5 === 0) out.push(`    description: generated job ${i}`);
    out.push(`    command: ./step.sh ${i}`);
    switch (i % 10) {
      case 0:
        out.push("    frequency: manual");
        break;
      case 1:
        // a dependency chain: every 10th job's successor runs after it
        out.push(`    frequency: after:job-${String(i - 1 || n).padStart(width, "0")}`);
        break;
      case 2:
        out.push(`    frequency: weekly`, `    weekday: ${WEEKDAYS[i % 7]}`, `    time: "${time}"`);
        break;
      case 3:
        out.push(`    frequency: monthly`, `    day_of_month: ${1 + (i % 28)}`, `    time: "${time}"`);
        break;
      case 4:
        out.push(`    frequency: weekdays`, `    time: "${time}"`);
        break;
      default:
        out.push(`    frequency: daily`, `    time: "${time}"`);
    }
    if (zone !== "UTC") out.push(`    timezone: ${zone}`);
    if (i % 2 === 0) out.push(`    tags: ${tags}`);
    if (i % 4 === 0) out.push("    retries: 2", "    timeout: 10m");
  }
  return out.join("\n") + "\n";
}

/** A whole svc.yaml: optional extra job blocks (already indented by two spaces) after `n` idle jobs. */
export function svcYaml(n: number, extraJobs = "", now = new Date()): string {
  return `defaults:\n  timezone: UTC\njobs:\n${idleJobsYaml(n, now)}${extraJobs}`;
}

/** A fresh temp directory holding svc.yaml (and svcd.yaml when given). */
export function writeTempProject(yaml: string, daemonYaml?: string, prefix = "svc-bench-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(dir, "svc.yaml"), yaml);
  if (daemonYaml !== undefined) writeFileSync(join(dir, "svcd.yaml"), daemonYaml);
  return dir;
}

/** "HHMM" of an epoch-ms instant in UTC. */
export function utcHHMM(at: number): string {
  const d = new Date(at);
  return `${pad2(d.getUTCHours())}${pad2(d.getUTCMinutes())}`;
}
