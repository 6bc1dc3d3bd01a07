import { parseCron, parseEvery } from "../config/cron.js";
import type { ExcludeSpec, FrequencyKind, ScheduleSpec, Weekday } from "../config/types.js";

/**
 * Builds a ScheduleSpec the way the loader would, for tests and benchmarks:
 * `spec("daily", "America/New_York", "0230")`.
 */
export function spec(
  frequency: FrequencyKind,
  timezone: string,
  time: string | null = null,
  extra: { weekday?: Weekday; dayOfMonth?: number } = {},
): ScheduleSpec {
  return {
    frequency,
    timezone,
    time: time === null ? null : { hour: Number(time.slice(0, 2)), minute: Number(time.slice(2, 4)) },
    weekday: extra.weekday ?? (frequency === "weekly" ? "mon" : null),
    dayOfMonth: extra.dayOfMonth ?? (frequency === "monthly" ? 1 : null),
  };
}

/** Epoch ms of an ISO instant, for readable fixtures. */
export function at(iso: string): number {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new Error(`bad instant in test: ${iso}`);
  return ms;
}

/** A `cron:` (or, with "every:" in front, an `every:`) spec as the loader builds it: `cronSpec("30 2 * * *", "America/New_York")`. */
export function cronSpec(expr: string, timezone: string, exclude: ExcludeSpec | null = null): ScheduleSpec {
  const every = expr.startsWith("every:");
  const r = every ? parseEvery(expr.slice("every:".length)) : parseCron(expr);
  if (!r.ok) throw new Error(`bad expression in test: ${expr}: ${r.message}`);
  return { frequency: every ? "every" : "cron", time: null, weekday: null, dayOfMonth: null, timezone, cron: r.spec, exclude };
}
