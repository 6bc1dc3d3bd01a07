import type { PageRequest, RunParams, RunQuery, RunsStore } from "./api.js";
import type { SqliteAttempts } from "./attempts.js";
import { DuplicateSlotError, InvalidQueryError, NotFoundError, sqliteCode } from "./errors.js";
import { assertTransition, canTransition, TransitionError } from "./runStatus.js";
import type { Db, Stmt } from "./sql.js";
import {
  checkSlice,
  count,
  likeContains,
  normInstant,
  normStatus,
  normTrigger,
  pageClause,
  StatementCache,
  Where,
} from "./sql.js";
import { SECRET_MASK, type NewRun, type Page, type ParamValue, type RunPatch, type RunRecord, type RunStatus, type Slice } from "./types.js";

/** Columns a patch may set; the SQL is built from these names only. */
const PATCHABLE = [
  "attempt",
  "started_at",
  "finished_at",
  "exit_code",
  "sla_breached",
  "hc_status",
  "pid",
  "pid_start",
  "error",
  "duration_ms",
  "next_attempt_at",
] as const satisfies readonly (keyof RunPatch)[];

/** API sort names -> SQL. Every scalar column; the indexed ones stay fast on big tables. */
const SORTABLE: Readonly<Record<string, string>> = Object.fromEntries(
  [
    "id",
    "job_name",
    "status",
    "attempt",
    "trigger",
    "triggered_by",
    "reason",
    "cycle_id",
    "scheduled_for",
    "created_at",
    "started_at",
    "finished_at",
    "exit_code",
    "sla_breached",
    "hc_status",
    "pid",
    "error",
    "duration_ms",
    "next_attempt_at",
    "scheduled_at",
    "backfill_id",
  ].map((c) => [c, `"${c}"`]),
);

export const FINISHED: readonly RunStatus[] = ["SUCCESS", "FAILED", "SKIPPED"];

export interface RunRow extends Omit<RunRecord, "tags" | "params"> {
  tags: string;
  params: string | null;
  secret_params: string | null;
}

const NO_PARAMS: Readonly<Record<string, ParamValue>> = Object.freeze({});

/** A stored row as a RunRecord: tags and params parsed, secret param values masked. */
export function toRun(row: RunRow): RunRecord {
  const { secret_params, params } = row;
  let shown: Record<string, ParamValue> = NO_PARAMS as Record<string, ParamValue>;
  if (params !== null) {
    shown = JSON.parse(params) as Record<string, ParamValue>;
    if (secret_params !== null) for (const name of JSON.parse(secret_params) as string[]) if (name in shown) shown[name] = SECRET_MASK;
  }
  // Every field named, in the columns' order: one object shape for every record (a rest-and-spread
  // copy of the row cost about ten times as much: docs/perf/FIXES.md, "toRun").
  return {
    id: row.id,
    job_name: row.job_name,
    status: row.status,
    attempt: row.attempt,
    trigger: row.trigger,
    triggered_by: row.triggered_by,
    reason: row.reason,
    cycle_id: row.cycle_id,
    tags: row.tags === "[]" ? [] : (JSON.parse(row.tags) as string[]),
    scheduled_for: row.scheduled_for,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    exit_code: row.exit_code,
    sla_breached: row.sla_breached,
    hc_status: row.hc_status,
    pid: row.pid,
    pid_start: row.pid_start,
    error: row.error,
    duration_ms: row.duration_ms,
    next_attempt_at: row.next_attempt_at,
    scheduled_at: row.scheduled_at,
    backfill_id: row.backfill_id,
    params: shown,
  };
}

/** The JSON texts stored for a new run's params: NULL for none. */
export function paramColumns(params: Record<string, ParamValue> | null | undefined, secret: readonly string[] | undefined) {
  const has = params != null && Object.keys(params).length > 0;
  const secrets = has && secret ? secret.filter((n) => n in params) : [];
  return { params: has ? JSON.stringify(params) : null, secret_params: secrets.length > 0 ? JSON.stringify(secrets) : null };
}

export class SqliteRuns implements RunsStore {
  private readonly st: Record<
    "insert" | "renumber" | "raiseSequence" | "insertTag" | "get" | "getMany" | "status" | "recent" | "lastFinished" | "lastCompleted" | "inCycle" | "countTag" | "paramValues",
    Stmt
  >;
  private readonly cache: StatementCache;
  /** The highest run id handed out (see create): backfills.create's runs too (noteIssued). */
  private issued = 0;

  constructor(
    private readonly db: Db,
    private readonly attempts: SqliteAttempts,
    /** Told of every row inserted (the log writer: a new run has no lines, its first append need not look). */
    private readonly onCreated: (id: number, job: string) => void = () => {},
  ) {
    this.cache = new StatementCache(db);
    this.st = {
      insert: db.prepare(`INSERT INTO job_runs
        (job_name, status, attempt, "trigger", triggered_by, reason, cycle_id, tags, scheduled_for, created_at, finished_at, error,
         params, secret_params, scheduled_at, backfill_id)
        VALUES (@job_name, @status, @attempt, @trigger, @triggered_by, @reason, @cycle_id, @tags, @scheduled_for, @created_at, @finished_at, @error,
         @params, @secret_params, @scheduled_at, @backfill_id)
        RETURNING *`),
      renumber: db.prepare("UPDATE job_runs SET id = ? WHERE id = ? RETURNING *"),
      raiseSequence: db.prepare("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'job_runs'"),
      insertTag: db.prepare("INSERT OR IGNORE INTO run_tags (tag, run_id) VALUES (?, ?)"),
      get: db.prepare("SELECT * FROM job_runs WHERE id = ?"),
      getMany: db.prepare("SELECT * FROM job_runs WHERE id IN (SELECT value FROM json_each(?))"),
      status: db.prepare("SELECT status FROM job_runs WHERE id = ?").pluck(),
      recent: db.prepare("SELECT * FROM job_runs WHERE job_name = ? ORDER BY id DESC LIMIT ?"),
      // The gate's "most recent finished run" (CONTRACT §3): of the job's newest SUCCESS and newest FAILED
      // run (two index seeks on (job_name, status, id): walking the job's runs back from the newest read
      // every run not finished first, and a backfill puts thousands of PENDING ones there), the one that
      // finished last. SKIPPED runs never ran: a forbid refusal of an overrunning job is not its result.
      lastFinished: db.prepare(
        `SELECT * FROM job_runs WHERE id IN (
           SELECT max(id) FROM job_runs WHERE job_name = @job AND status = 'SUCCESS'
           UNION ALL SELECT max(id) FROM job_runs WHERE job_name = @job AND status = 'FAILED')
         ORDER BY finished_at DESC, id DESC LIMIT 1`,
      ),
      // The status of the newest run that ran to an end (SKIPPED ones never ran): two index seeks.
      lastCompleted: db.prepare(
        `SELECT status FROM job_runs WHERE id = (SELECT max(m) FROM (
           SELECT max(id) AS m FROM job_runs WHERE job_name = @job AND status = 'SUCCESS'
           UNION ALL SELECT max(id) FROM job_runs WHERE job_name = @job AND status = 'FAILED'))`,
      ).pluck(),
      inCycle: db.prepare("SELECT * FROM job_runs WHERE cycle_id = ? ORDER BY id"),
      countTag: db.prepare("SELECT count(*) FROM run_tags WHERE tag = ?"),
      paramValues: db.prepare("SELECT params, secret_params FROM job_runs WHERE id = ?"),
    };
  }

  create(run: NewRun): RunRecord {
    const status = run.status ?? "PENDING";
    if (status !== "PENDING" && status !== "SKIPPED") throw new RangeError(`a new run is PENDING or SKIPPED, not ${status}`);
    if (run.reason != null && run.reason.length > 500) {
      throw new RangeError(`reason is ${run.reason.length} characters long; at most 500 are allowed`);
    }
    const row = {
      job_name: run.job_name,
      status,
      attempt: run.attempt ?? 1,
      trigger: normTrigger(run.trigger),
      triggered_by: run.triggered_by,
      reason: run.reason ?? null,
      cycle_id: run.cycle_id,
      tags: JSON.stringify(run.tags),
      scheduled_for: run.scheduled_for ?? null,
      created_at: run.created_at,
      // A run created SKIPPED (concurrency forbid, upstream skipped) ends when it is created.
      finished_at: status === "SKIPPED" ? run.created_at : null,
      error: run.error ?? null,
      ...paramColumns(run.params, run.secretParams),
      scheduled_at: run.scheduled_at ?? null,
      backfill_id: run.backfill_id ?? null,
    };
    const insert = (): RunRecord => {
      let created = toRun(this.st.insert.get(row) as RunRow);
      // A rolled-back transaction (or savepoint) gives its runs' ids back to SQLite: AUTOINCREMENT's
      // counter is rolled back too. The engine may still hold such a run's process, lines or queue
      // entry under its id until that process is gone, so a run never takes an id handed out before:
      // it takes the next one, and the counter is moved past it (an UPDATE of the id does not).
      if (created.id <= this.issued) {
        const id = this.issued + 1;
        created = toRun(this.st.renumber.get(id, created.id) as RunRow);
        this.st.raiseSequence.run(id);
      }
      this.issued = created.id;
      for (const tag of run.tags) this.st.insertTag.run(tag, created.id);
      this.onCreated(created.id, created.job_name);
      return created;
    };
    try {
      // Tags (and a renumbered id) take more than one statement: atomic in the caller's transaction or one of its own.
      return this.db.inTransaction ? insert() : this.db.transaction(insert).immediate();
    } catch (e) {
      if (sqliteCode(e) === "SQLITE_CONSTRAINT_UNIQUE" && row.scheduled_for !== null && /job_runs\.scheduled_for/.test(String(e))) {
        throw new DuplicateSlotError(row.job_name, row.scheduled_for);
      }
      throw e;
    }
  }

  /**
   * For an INSERT of many runs (a backfill's), in its transaction: moves AUTOINCREMENT's counter past
   * every id handed out before (see create), then, once inserted, `noteIssued` their highest id.
   */
  keepIdsFresh(): void {
    if (this.issued > 0) this.st.raiseSequence.run(this.issued);
  }

  noteIssued(id: number): void {
    if (id > this.issued) this.issued = id;
  }

  paramValues(id: number): RunParams | null {
    const row = this.st.paramValues.get(id) as { params: string | null; secret_params: string | null } | undefined;
    if (row === undefined) throw new NotFoundError("run", id);
    if (row.params === null) return null;
    return {
      values: JSON.parse(row.params) as Record<string, ParamValue>,
      secret: row.secret_params === null ? [] : (JSON.parse(row.secret_params) as string[]),
    };
  }

  get(id: number): RunRecord | null {
    const row = this.st.get.get(id) as RunRow | undefined;
    return row ? toRun(row) : null;
  }

  getMany(ids: readonly number[]): RunRecord[] {
    if (ids.length === 0) return [];
    return (this.st.getMany.all(JSON.stringify(ids)) as RunRow[]).map(toRun);
  }

  transition(id: number, to: RunStatus, patch: RunPatch = {}, from?: RunStatus): RunRecord {
    const target = normStatus(to);
    // Leaving RETRYING records the attempts (attempts.ts): that needs the row as it was, so the slow path.
    if (from !== undefined && normStatus(from) !== "RETRYING" && canTransition(normStatus(from), target)) {
      // The usual case in one statement: the expected status is checked by the UPDATE itself.
      const row = this.write(id, patch, target, normStatus(from));
      if (row) return toRun(row);
      // Not found, or not in `from` any more: the checks below say which.
    }
    const move = this.db.transaction((): RunRecord => {
      const current = this.st.status.get(id) as RunStatus | undefined;
      if (current === undefined) throw new NotFoundError("run", id);
      if (from !== undefined && normStatus(from) !== current) throw new TransitionError(id, current, target, normStatus(from));
      assertTransition(id, current, target);
      const before = current === "RETRYING" ? this.attempts.retrying(id) : undefined;
      const row = this.write(id, patch, target);
      if (!row) throw new NotFoundError("run", id);
      if (before) this.attempts.leftRetrying(before, row, patch.attempt_started_at);
      return toRun(row);
    });
    return move.immediate();
  }

  update(id: number, patch: RunPatch): RunRecord {
    const apply = this.db.transaction((): RunRecord => {
      const row = this.write(id, patch, null);
      if (!row) throw new NotFoundError("run", id);
      return toRun(row);
    });
    return apply.immediate();
  }

  recent(job: string, limit: number): RunRecord[] {
    return (this.st.recent.all(job, limit) as RunRow[]).map(toRun);
  }

  /** SUCCESS or FAILED: the status of the job's newest run that ran to an end (`only_after_failure`); null when none did. */
  lastCompletedStatus(job: string): RunStatus | null {
    return (this.st.lastCompleted.get({ job }) as RunStatus | undefined) ?? null;
  }

  lastFinished(job: string): RunRecord | null {
    const row = this.st.lastFinished.get({ job }) as RunRow | undefined;
    return row ? toRun(row) : null;
  }

  byStatus(statuses: RunStatus[]): RunRecord[] {
    if (statuses.length === 0) return [];
    const norm = [...new Set(statuses.map(normStatus))];
    const st = this.cache.get(`SELECT * FROM job_runs WHERE status IN (${norm.map(() => "?").join(", ")}) ORDER BY id`);
    return (st.all(...norm) as RunRow[]).map(toRun);
  }

  inCycle(cycleId: string): RunRecord[] {
    return (this.st.inCycle.all(cycleId) as RunRow[]).map(toRun);
  }

  cyclesStartingWith(prefix: string, limit: number): string[] {
    // A range on the cycle index (LIKE would not use it); U+FFFF sorts after every id character.
    const st = this.cache.get("SELECT DISTINCT cycle_id FROM job_runs WHERE cycle_id >= ? AND cycle_id < ? ORDER BY cycle_id LIMIT ?");
    return (st.all(prefix, `${prefix}\uffff`, limit) as { cycle_id: string }[]).map((r) => r.cycle_id);
  }

  page(q: RunQuery, p: PageRequest): Page<RunRecord> {
    const { orderBy, limit, offset } = pageClause(p, SORTABLE, "id");
    const { rows, total } = this.select(q, orderBy, limit, offset);
    return { rows, total, page: p.page, page_size: p.page_size };
  }

  audit(q: RunQuery, limit: number, offset: number): Slice<RunRecord> {
    checkSlice(limit, offset);
    const { rows, total } = this.select(q, "id DESC", limit, offset);
    return { rows, total, limit, offset };
  }

  private select(q: RunQuery, orderBy: string, limit: number, offset: number): { rows: RunRecord[]; total: number } {
    const w = runWhere(q);
    const where = w.sql();
    // run_tags rows exist only with their run (foreign key), so a tag alone is counted there.
    const tagOnly = q.tag !== undefined && w.terms.length === 1;
    const total = tagOnly ? count(this.st.countTag, [q.tag]) : count(this.cache.get(`SELECT count(*) FROM job_runs${where}`), w.params);
    // An offset past the end answers an empty page with the true total. The
    // page is chosen on ids alone (often from an index, sorting only ids),
    // then only its rows are read.
    const rows =
      offset >= total
        ? []
        : (
            this.cache
              .get(`SELECT * FROM job_runs WHERE id IN (SELECT id FROM job_runs${where} ORDER BY ${orderBy} LIMIT ? OFFSET ?) ORDER BY ${orderBy}`)
              .all(...w.params, limit, offset) as RunRow[]
          ).map(toRun);
    return { rows, total };
  }

  /**
   * UPDATE with the patch's defined fields (and the status when given), only
   * while the run is in `whileStatus` when given; returns the updated row, or
   * undefined when no row matched.
   */
  private write(id: number, patch: RunPatch, status: RunStatus | null, whileStatus?: RunStatus): RunRow | undefined {
    const cols = PATCHABLE.filter((c) => patch[c] !== undefined);
    const sets = cols.map((c) => `${c} = ?`);
    const params: unknown[] = cols.map((c) => patch[c]);
    if (status !== null) {
      sets.unshift("status = ?");
      params.unshift(status);
    }
    params.push(id);
    if (whileStatus !== undefined) params.push(whileStatus);
    const where = whileStatus === undefined ? "id = ?" : "id = ? AND status = ?";
    if (sets.length === 0) return this.cache.get(`SELECT * FROM job_runs WHERE ${where}`).get(...params) as RunRow | undefined;
    return this.cache.get(`UPDATE job_runs SET ${sets.join(", ")} WHERE ${where} RETURNING *`).get(...params) as RunRow | undefined;
  }
}

/** WHERE clause of a RunQuery; every term is served by an index except `reason`'s substring match. */
export function runWhere(q: RunQuery): Where {
  const w = new Where();
  if (q.job !== undefined) w.add("job_name = ?", q.job);
  if (q.jobs !== undefined) {
    if (q.jobs.length === 0) w.add("0");
    else w.add(`job_name IN (${q.jobs.map(() => "?").join(", ")})`, ...q.jobs);
  }
  if (q.status !== undefined) w.add("status = ?", normStatus(q.status));
  if (q.statuses !== undefined) {
    if (q.statuses.length === 0) w.add("0");
    else {
      const s = [...new Set(q.statuses.map(normStatus))];
      w.add(`status IN (${s.map(() => "?").join(", ")})`, ...s);
    }
  }
  if (q.trigger !== undefined) w.add('"trigger" = ?', normTrigger(q.trigger));
  if (q.since !== undefined) w.add("created_at >= ?", normInstant("since", q.since));
  if (q.until !== undefined) w.add("created_at < ?", normInstant("until", q.until));
  if (q.sla_breached !== undefined) {
    if (q.sla_breached !== 0 && q.sla_breached !== 1) throw new InvalidQueryError(`sla_breached must be 0 or 1, got ${String(q.sla_breached)}`);
    // A literal, not a parameter: SQLite uses the partial index only when it can see the value.
    w.add(`sla_breached = ${q.sla_breached}`);
  }
  if (q.reason !== undefined && q.reason !== "") {
    // "reason IS NOT NULL" lets SQLite use the partial index of runs that have a reason.
    w.add("reason IS NOT NULL AND svc_fold(reason) LIKE ? ESCAPE '\\'", likeContains(q.reason.toLowerCase()));
  }
  if (q.cycle_id !== undefined) w.add("cycle_id = ?", q.cycle_id);
  if (q.backfill_id !== undefined) w.add("backfill_id = ?", q.backfill_id);
  for (const { name, value } of q.params ?? []) {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new InvalidQueryError(`param name must match [a-z_][a-z0-9_]*, got "${name}"`);
    // The value as JSON text, the way `->` reads it: a string, or the number / true / false it spells.
    const texts = [JSON.stringify(value)];
    const n = Number(value);
    if (value.trim() !== "" && Number.isFinite(n)) texts.push(JSON.stringify(n));
    if (value === "true" || value === "false") texts.push(value);
    // A secret param's values are never searched: matching them would reveal them one guess at a time.
    w.add(
      `(params IS NOT NULL AND params -> ? IN (${texts.map(() => "?").join(", ")}) AND (secret_params IS NULL OR NOT EXISTS (SELECT 1 FROM json_each(secret_params) WHERE value = ?)))`,
      `$.${name}`,
      ...texts,
      name,
    );
  }
  // EXISTS rather than IN (SELECT ...): SQLite then walks job_runs in the
  // requested order (or by another filter's index) and probes run_tags per
  // run, instead of building and sorting the tag's whole run list.
  if (q.tag !== undefined) w.add("EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = job_runs.id AND t.tag = ?)", q.tag);
  return w;
}
