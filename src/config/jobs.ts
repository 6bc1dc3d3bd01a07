/**
 * One job: its fields merged over `defaults` and the schema's defaults, the
 * semantic rules the schema cannot express, and the frozen JobConfig.
 *
 * Every reader here is defensive: a value of the wrong type was already
 * reported by the schema, so it is treated as absent and checking goes on
 * (all errors are collected in one pass).
 */
import { resolve } from "node:path";
import { resolveChannel } from "./channels.js";
import { cronNeverMatches } from "../schedule/cronMatch.js";
import { nextCronSlot } from "../schedule/cronRun.js";
import { zoneInfo } from "../schedule/zone.js";
import { parseIcs } from "../schedule/icsParse.js";
import { parseCron, parseEvery } from "./cron.js";
import { readConfigText } from "./readText.js";
import type {
  CalendarSource,
  CronSpec,
  ExcludeSpec,
  FrequencyKind,
  HealthcheckConfig,
  IntegrationConfig,
  JobConfig,
  NotifyEntry,
  NotifyEvent,
  OutputMode,
  RetryDelay,
  ScheduleSpec,
  TimeOfDay,
  Weekday,
} from "./types.js";
import { formatDuration, parseDuration } from "./duration.js";
import type { IssueList, PathSeg } from "./issues.js";
import { parseParams } from "./params.js";
import { schemaDefault } from "./schema/jsonSchema.js";
import { FREQUENCIES, svcSchema, TIMED_FREQUENCIES } from "./schema/svcSchema.js";
import { asDict, isDict, isInt, isKnownZone, isString, isStringList, type Dict } from "./values.js";

/** A job's fields over `defaults`: the job's own value wins; paths are computed only for errors. */
class JobFields {
  constructor(
    readonly name: string,
    private readonly raw: Dict,
    private readonly defaults: Dict,
  ) {}

  /** The job's own value, else the one from `defaults`; undefined when neither has one. */
  get(field: string): unknown {
    const own = this.raw[field];
    if (own !== undefined && own !== null) return own;
    const inherited = this.defaults[field];
    return inherited === null ? undefined : inherited;
  }

  /** Where the value `get(field)` returns is written. */
  path(field: string): PathSeg[] {
    const own = this.raw[field];
    return own !== undefined && own !== null ? ["jobs", this.name, field] : ["defaults", field];
  }
}

export interface JobContext {
  defaults: Dict;
  /** Directory of svc.yaml: `exclude.calendar` paths are relative to it. */
  dir: string;
  /** Calendars read during this load, by absolute path (null: broken, already reported). */
  calendars: Map<string, CalendarSource | null>;
  /** `defaults.frequency` when it is a `cron:`/`every:` expression, parsed once; null otherwise or when invalid. */
  defaultCron: CronSpec | null;
  /** defaults.timezone when valid, else the system zone. */
  defaultTz: string;
  integrations: ReadonlyMap<string, IntegrationConfig>;
  /** Integrations declared but invalid (already reported): channels naming them are not checked. */
  brokenIntegrations: ReadonlySet<string>;
  issues: IssueList;
  /** defaults.exclude.dates was checked (by the first scheduled job that reads it): its errors are reported once. */
  defaultDatesChecked?: boolean;
}

const NOTIFY_EVENTS: readonly NotifyEvent[] = ["on_success", "on_failure", "on_sla_breach", "on_retry"];
const WEEKDAYS: readonly string[] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
const TIME = /^(?:[01][0-9]|2[0-3])[0-5][0-9]$/;
const FREQUENCY = new RegExp(`^(?:${FREQUENCIES.join("|")})$`);

/** Schema defaults of job fields, read once. */
const jobDefault = (field: string): unknown => schemaDefault(svcSchema, ["defaults", field]);
const DEFAULT_ON_FAILURE = jobDefault("on_failure") as JobConfig["onFailure"];
const DEFAULT_CONCURRENCY = jobDefault("concurrency") as JobConfig["concurrency"];
const DEFAULT_RETRIES = jobDefault("retries") as number;
const DEFAULT_RETRY_DELAY = jobDefault("retry_delay") as string;
const DEFAULT_CATCHUP = jobDefault("catchup") as boolean;
const DEFAULT_WEEKDAY = jobDefault("weekday") as Weekday;
const DEFAULT_DAY_OF_MONTH = jobDefault("day_of_month") as number;
const DEFAULT_HC_TIMEOUT_MS = parseDuration(
  schemaDefault(svcSchema, ["defaults", "healthcheck", "timeout"]) as string,
)!;
const DEFAULT_HC_ON_FAIL = schemaDefault(svcSchema, ["defaults", "healthcheck", "on_fail"]) as HealthcheckConfig["onFail"];

export function buildJob(name: string, raw: Dict, ctx: JobContext): JobConfig {
  const { defaults, issues } = ctx;
  const fields = new JobFields(name, raw, defaults);

  const dependsOn = isStringList(raw.depends_on) ? [...new Set(raw.depends_on)] : [];
  const { schedule, after } = buildSchedule(fields, raw, dependsOn, ctx);

  const timeoutMs = positiveDuration(fields, "timeout", issues, MAX_TIMER_MS);
  const slaMs = positiveDuration(fields, "sla", issues);
  checkTimerFields(fields, issues);
  if (timeoutMs !== null && slaMs !== null && slaMs >= timeoutMs) {
    const where = raw.sla === undefined && raw.timeout !== undefined ? "timeout" : "sla";
    issues.error(
      ["jobs", name, where],
      `sla (${formatDuration(slaMs)}) must be less than timeout (${formatDuration(timeoutMs)}): ` +
        `the job would be stopped before its SLA could be breached`,
    );
  }

  const description = isString(raw.description) ? raw.description : null;
  if (description === null || description.trim() === "") issues.warn(["jobs", name], `job "${name}" has no description`);

  // env and notify merge key by key over defaults; every other field is replaced whole.
  const env: Record<string, string> = {};
  for (const source of [asDict(defaults.env), asDict(raw.env)]) {
    for (const [k, v] of Object.entries(source)) if (isString(v)) env[k] = v;
  }
  const tags = fields.get("tags");
  const retries = fields.get("retries");
  const catchup = fields.get("catchup");

  return {
    name,
    command: isStringList(raw.command) ? [...raw.command] : isString(raw.command) ? raw.command : "",
    description,
    schedule,
    after,
    dependsOn,
    upstreams: [...new Set([...dependsOn, ...(after === null ? [] : [after])])],
    dependencyTriggered: schedule.frequency === "after",
    timeoutMs,
    slaMs,
    tags: isStringList(tags) ? [...tags] : [],
    onFailure: enumValue(fields.get("on_failure"), ["alert", "skip", "stop", "ignore"], DEFAULT_ON_FAILURE),
    retries: isInt(retries, 0, 100) ? retries : DEFAULT_RETRIES,
    retryDelay: parseRetryDelay(fields.get("retry_delay")),
    concurrency: enumValue(fields.get("concurrency"), ["allow", "forbid", "replace"], DEFAULT_CONCURRENCY),
    catchup: typeof catchup === "boolean" ? catchup : DEFAULT_CATCHUP,
    env,
    healthcheck: parseHealthcheck(fields.get("healthcheck")),
    output: parseOutputs(fields, issues),
    notify: parseNotify(raw, defaults, name, ctx),
    params: parseParams(name, raw.params, defaults.params, schedule.frequency !== "manual", issues),
  };
}

/**
 * Frequency and its companions. Frequency: the job's own; else after-semantics
 * with depends_on; else defaults.frequency; else manual. `time` is required by
 * the timed frequencies and an error on the others, `weekday` and
 * `day_of_month` belong to weekly and monthly; values inherited from
 * `defaults` are simply unused where they do not apply.
 */
function buildSchedule(
  fields: JobFields,
  raw: Dict,
  dependsOn: readonly string[],
  ctx: JobContext,
): { schedule: ScheduleSpec; after: string | null } {
  const { defaults, issues } = ctx;
  const name = fields.name;
  let kind: FrequencyKind = "manual";
  let after: string | null = null;
  let known = true; // false when the job's own frequency is invalid (already reported)
  let cron: CronSpec | null = null;
  if (isString(raw.frequency)) {
    if (raw.frequency.startsWith("after:")) {
      kind = "after";
      after = raw.frequency.slice("after:".length);
    } else if (FREQUENCY.test(raw.frequency)) {
      kind = raw.frequency as FrequencyKind;
    } else if (isExpression(raw.frequency)) {
      kind = raw.frequency.startsWith("cron:") ? "cron" : "every";
      cron = expression(raw.frequency, ["jobs", name, "frequency"], issues);
      known = cron !== null;
    } else {
      known = false;
    }
  } else if (dependsOn.length > 0) {
    kind = "after";
  } else if (isString(defaults.frequency) && FREQUENCY.test(defaults.frequency)) {
    kind = defaults.frequency as FrequencyKind;
  } else if (isString(defaults.frequency) && isExpression(defaults.frequency)) {
    kind = defaults.frequency.startsWith("cron:") ? "cron" : "every";
    cron = ctx.defaultCron; // parsed once by the project (its errors are reported there, once)
    known = cron !== null;
  }
  const timed = (TIMED_FREQUENCIES as readonly string[]).includes(kind);
  const has = (field: string) => raw[field] !== undefined && raw[field] !== null;
  const written = isString(raw.frequency) ? raw.frequency : isString(defaults.frequency) ? defaults.frequency : kind;
  const which = (): string =>
    `frequency ${kind === "after" ? `after:${after ?? dependsOn.join(",")}` : kind === "cron" || kind === "every" ? written : kind}${isString(raw.frequency) ? "" : " (from defaults)"}`;
  const expressionKind = kind === "cron" || kind === "every";
  const notWithExpression = (field: string): void =>
    issues.error(["jobs", name, field], `${field} cannot be used with ${which()}: the expression sets when it runs; remove ${field}`);

  let time: TimeOfDay | null = null;
  if (has("time") && expressionKind) notWithExpression("time");
  else if (known && has("time") && !timed) {
    issues.error(["jobs", name, "time"], `time is only used by ${TIMED_FREQUENCIES.join(", ")} (this job has ${which()})`);
  }
  if (timed) {
    const t = fields.get("time");
    if (t === undefined) {
      issues.error(["jobs", name, "time"], `time is required for ${which()}: add time: "HHMM", e.g. time: "0230"`);
    } else if (isString(t) && TIME.test(t)) {
      time = { hour: Number(t.slice(0, 2)), minute: Number(t.slice(2)) };
    }
  }
  if (has("weekday") && expressionKind) notWithExpression("weekday");
  else if (known && has("weekday") && kind !== "weekly") {
    issues.error(["jobs", name, "weekday"], `weekday is only used by frequency weekly (this job has ${which()})`);
  }
  if (has("day_of_month") && expressionKind) notWithExpression("day_of_month");
  else if (known && has("day_of_month") && kind !== "monthly") {
    issues.error(["jobs", name, "day_of_month"], `day_of_month is only used by frequency monthly (this job has ${which()})`);
  }
  const w = kind === "weekly" ? fields.get("weekday") : undefined;
  const d = kind === "monthly" ? fields.get("day_of_month") : undefined;

  let timezone = ctx.defaultTz;
  if (isString(raw.timezone) && raw.timezone !== "") {
    if (isKnownZone(raw.timezone)) timezone = raw.timezone;
    else issues.error(["jobs", name, "timezone"], unknownZoneMessage(raw.timezone));
  }
  if (cron !== null && !runsInZone(cron, timezone)) {
    issues.error(
      ["jobs", name, "frequency"],
      `${written} can never run in ${timezone}: every local time it names falls in a DST gap, and a periodic expression (minute field starting with *) skips times that do not exist; name other hours, or a fixed minute (then a time in the gap runs right after it)`,
    );
  }
  return {
    after,
    schedule: {
      frequency: kind,
      time,
      weekday: kind !== "weekly" ? null : isString(w) && WEEKDAYS.includes(w) ? (w as Weekday) : DEFAULT_WEEKDAY,
      dayOfMonth: kind !== "monthly" ? null : isInt(d, 1, 31) ? d : DEFAULT_DAY_OF_MONTH,
      timezone,
      cron,
      exclude: buildExclude(raw, kind, which, ctx, name),
    },
  };
}

/**
 * Whether the expression has a slot from now on in `timezone`. Only a periodic expression whose hours are
 * restricted can have every match in DST gaps (`*\/30 2 * 3 0#2` in America/New_York: 02:xx on the second
 * Sunday of March, which never exists there); the daemon would find no slot to arm.
 */
function runsInZone(cron: CronSpec, timezone: string): boolean {
  if (cron.fixedTime || cron.expr.split(" ")[2]!.startsWith("*")) return true;
  try {
    nextCronSlot(cron, zoneInfo(timezone), Date.now());
    return true;
  } catch {
    return false;
  }
}

function isExpression(frequency: string): boolean {
  return frequency.startsWith("cron:") || frequency.startsWith("every:");
}

/** `defaults.frequency` as an expression (errors reported once, at defaults.frequency). */
export function defaultExpression(defaults: Dict, issues: IssueList): CronSpec | null {
  return isString(defaults.frequency) && isExpression(defaults.frequency)
    ? expression(defaults.frequency, ["defaults", "frequency"], issues)
    : null;
}

/** `cron:<expr>` or `every:<n><unit>` -> CronSpec; errors at `path`. */
function expression(frequency: string, path: PathSeg[], issues: IssueList): CronSpec | null {
  const isCron = frequency.startsWith("cron:");
  const body = frequency.slice(isCron ? "cron:".length : "every:".length);
  const r = isCron ? parseCron(body) : parseEvery(body);
  if (!r.ok) {
    issues.error(path, r.message);
    return null;
  }
  if (cronNeverMatches(r.spec)) {
    const [, , , dom, month, dow] = r.spec.expr.split(" ");
    issues.error(
      path,
      `${frequency} can never run: no date passes its day-of-month "${dom}", month "${month}" and day-of-week "${dow}" fields together`,
    );
    return null;
  }
  return r.spec;
}

const DATE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;

/**
 * `exclude` of the job and of `defaults`, merged as a union (CONTRACT §7.1).
 * The job's own `exclude` on a job without a time schedule is an error; one
 * inherited from defaults is simply unused there.
 */
function buildExclude(raw: Dict, kind: FrequencyKind, which: () => string, ctx: JobContext, name: string): ExcludeSpec | null {
  const own = raw.exclude;
  const scheduled = kind !== "manual" && kind !== "after";
  if (!scheduled) {
    if (isDict(own)) {
      ctx.issues.error(["jobs", name, "exclude"], `exclude only applies to scheduled jobs (this job has ${which()}, which has no slots to exclude)`);
    }
    return null;
  }
  const dates = new Set<string>();
  const calendars: CalendarSource[] = [];
  for (const [source, base] of [
    [ctx.defaults.exclude, ["defaults", "exclude"]],
    [own, ["jobs", name, "exclude"]],
  ] as const) {
    if (!isDict(source)) continue;
    if (Array.isArray(source.dates)) {
      const report = base[0] === "jobs" || !ctx.defaultDatesChecked;
      if (base[0] === "defaults") ctx.defaultDatesChecked = true;
      source.dates.forEach((d, i) => {
        if (!isString(d)) return;
        if (isRealDate(d)) dates.add(d);
        else if (DATE.test(d) && report) ctx.issues.error([...base, "dates", i], `"${d}" is not a date of the calendar`);
      });
    }
    if (isString(source.calendar) && source.calendar !== "") {
      const cal = loadCalendar(source.calendar, [...base, "calendar"], ctx);
      if (cal && !calendars.some((c) => c.path === cal.path)) calendars.push(cal);
    }
  }
  if (dates.size === 0 && calendars.length === 0) return null;
  return { dates: [...dates].sort(), calendars };
}

function isRealDate(text: string): boolean {
  const m = DATE.exec(text);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = new Date(Date.UTC(y, mo - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
}

/** Reads and checks an .ics file once per load; its problems are reported at the field that names it. */
function loadCalendar(written: string, path: PathSeg[], ctx: JobContext): CalendarSource | null {
  const abs = resolve(ctx.dir, written);
  if (ctx.calendars.has(abs)) return ctx.calendars.get(abs) ?? null;
  const read = readConfigText(abs);
  let cal: CalendarSource | null = null;
  if (!read.ok) {
    const where = read.line > 0 ? ` line ${read.line}` : "";
    ctx.issues.error(path, `calendar ${written}${where}: ${read.message}`);
  } else {
    const parsed = parseIcs(read.text, isKnownZone);
    if (parsed.ok) cal = { path: abs, name: written, text: read.text };
    else ctx.issues.error(path, `calendar ${written} line ${parsed.line}: ${parsed.message}`);
  }
  ctx.calendars.set(abs, cal);
  return cal;
}

export function unknownZoneMessage(zone: string): string {
  return `unknown timezone "${zone}": use an IANA name such as Europe/Berlin, America/New_York or UTC`;
}

/** Node's timers cannot wait longer than 24.8 days: a longer one fires at once. */
const MAX_TIMER_MS = 24 * 86_400_000;

function positiveDuration(fields: JobFields, field: string, issues: IssueList, max = Infinity): number | null {
  const text = fields.get(field);
  if (!isString(text)) return null;
  const ms = parseDuration(text);
  if (ms === null) return null; // the schema reported the syntax
  if (ms === 0) {
    issues.error(fields.path(field), `${field} must be greater than 0`);
    return null;
  }
  if (ms > max) {
    issues.error(fields.path(field), `${field} must be at most 24d (a timer cannot wait longer)`);
    return null;
  }
  return ms;
}

/** healthcheck.timeout: greater than 0 and at most 24d (a retry's delay waits on the clock's long timers: any length). */
function checkTimerFields(fields: JobFields, issues: IssueList): void {
  const hc = fields.get("healthcheck");
  if (isDict(hc) && isString(hc.timeout)) {
    const ms = parseDuration(hc.timeout);
    if (ms === 0) issues.error([...fields.path("healthcheck"), "timeout"], "must be greater than 0");
    else if (ms !== null && ms > MAX_TIMER_MS) issues.error([...fields.path("healthcheck"), "timeout"], "must be at most 24d (a timer cannot wait longer)");
  }
}

function enumValue<T extends string>(value: unknown, allowed: readonly T[], dflt: T): T {
  return isString(value) && (allowed as readonly string[]).includes(value) ? (value as T) : dflt;
}

function parseRetryDelay(value: unknown): RetryDelay {
  const text = isString(value) ? value : DEFAULT_RETRY_DELAY;
  if (text.startsWith("fixed:")) {
    const ms = parseDuration(text.slice("fixed:".length));
    if (ms !== null) return { kind: "fixed", ms };
  }
  return { kind: "exponential" };
}

function parseHealthcheck(hc: unknown): HealthcheckConfig | null {
  if (!isDict(hc) || !isString(hc.command)) return null;
  const timeoutMs = isString(hc.timeout) ? (parseDuration(hc.timeout) ?? DEFAULT_HC_TIMEOUT_MS) : DEFAULT_HC_TIMEOUT_MS;
  const onFail = hc.on_fail === "warn_only" || hc.on_fail === "mark_failed" ? hc.on_fail : DEFAULT_HC_ON_FAIL;
  return { command: hc.command as string, timeoutMs, onFail };
}

function parseOutputs(fields: JobFields, issues: IssueList): Record<string, OutputMode> {
  const out: Record<string, OutputMode> = {};
  const outputs = fields.get("output");
  if (!isDict(outputs)) return out;
  for (const [name, mode] of Object.entries(outputs)) {
    if (!isString(mode)) continue;
    const parsed = parseOutputMode(mode);
    if (parsed === null) continue; // schema reported it
    if (parsed.kind === "regex") {
      try {
        new RegExp(parsed.pattern);
      } catch (e) {
        issues.error([...fields.path("output"), name], `invalid regular expression: ${(e as Error).message}`);
        continue;
      }
    }
    out[name] = parsed;
  }
  return out;
}

export function parseOutputMode(mode: string): OutputMode | null {
  if (mode === "last_line" || mode === "first_line" || mode === "exit_code") return { kind: mode };
  if (mode.startsWith("json_field:") && mode.length > "json_field:".length) {
    return { kind: "json_field", key: mode.slice("json_field:".length) };
  }
  if (mode.startsWith("regex:") && mode.length > "regex:".length) return { kind: "regex", pattern: mode.slice("regex:".length) };
  return null;
}

function parseNotify(raw: Dict, defaults: Dict, job: string, ctx: JobContext): Partial<Record<NotifyEvent, NotifyEntry[]>> {
  const own = asDict(raw.notify);
  const inherited = asDict(defaults.notify);
  const out: Partial<Record<NotifyEvent, NotifyEntry[]>> = {};
  for (const event of NOTIFY_EVENTS) {
    const fromJob = own[event] !== undefined && own[event] !== null;
    const value = fromJob ? own[event] : inherited[event];
    if (value === undefined || value === null) continue;
    const base = (): PathSeg[] => (fromJob ? ["jobs", job, "notify", event] : ["defaults", "notify", event]);
    const entries: NotifyEntry[] = [];
    if (Array.isArray(value)) {
      value.forEach((entry, i) => {
        const parsed = parseNotifyEntry(entry, event, () => [...base(), i], ctx);
        if (parsed) entries.push(parsed);
      });
    } else {
      const parsed = parseNotifyEntry(value, event, base, ctx);
      if (parsed) entries.push(parsed);
    }
    if (entries.length > 0) out[event] = entries;
  }
  return out;
}

function parseNotifyEntry(entry: unknown, event: NotifyEvent, path: () => PathSeg[], ctx: JobContext): NotifyEntry | null {
  let channel: string;
  let message: string | null = null;
  let attachLogs: NotifyEntry["attachLogs"] = null;
  let onlyAfterFailure = false;
  let channelPath = path;
  if (isString(entry)) {
    channel = entry;
  } else if (isDict(entry) && isString(entry.channel)) {
    channel = entry.channel;
    channelPath = () => [...path(), "channel"];
    if (isString(entry.message)) message = entry.message;
    if (isString(entry.attach_logs)) {
      const m = /^last_([0-9]+)_lines$/.exec(entry.attach_logs);
      if (entry.attach_logs === "all") attachLogs = "all";
      else if (m && Number(m[1]) >= 1 && Number(m[1]) <= 10_000) attachLogs = { lastLines: Number(m[1]) };
      else if (m) ctx.issues.error([...path(), "attach_logs"], "last_<N>_lines needs N from 1 to 10000");
    }
    if (entry.only_after_failure === true) {
      onlyAfterFailure = true;
      if (event !== "on_success") ctx.issues.warn([...path(), "only_after_failure"], "only_after_failure only applies to on_success");
    }
  } else {
    return null; // schema reported it
  }
  const name = channel.includes(":") ? channel.slice(0, channel.indexOf(":")).trim() : channel.trim();
  if (ctx.brokenIntegrations.has(name)) return null;
  const resolved = resolveChannel(channel, ctx.integrations);
  if ("error" in resolved) {
    ctx.issues.error(channelPath(), resolved.error);
    return null;
  }
  return { channel, message, attachLogs, onlyAfterFailure };
}
