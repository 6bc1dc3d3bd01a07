/**
 * `svc export --format=json [--output FILE] [--include-logs]`: the daemon's
 * state as one JSON document: daemon info, effective config (secrets ***),
 * jobs, job_state, every run, outputs, alerts, integrations, and with
 * --include-logs every run's log lines.
 *
 * The API has no single export route, so the document is composed from the
 * read routes. Runs are read with `until` pinned to the export instant, so a
 * run created meanwhile cannot shift pages; outputs and alerts (newest first)
 * are de-duplicated by id. It is a snapshot per table, not one transaction.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import type { Command } from "commander";
import { clientFor } from "../client/index.js";
import type { DaemonClient, Query } from "../client/http.js";
import type { AuditAnswer, DaemonInfo, Integration, JobsAnswer, RunRecord, Slice } from "../client/types.js";
import type { CliContext } from "../context.js";
import { checkOutputFile, UsageError } from "../output.js";
import { allLines } from "./logs.js";

export const EXPORT_FORMAT_VERSION = 1;
const LIMIT = 1000;
const PAGE_SIZE = 100;

export function register(program: Command, ctx: CliContext): void {
  program
    .command("export")
    .description("print a full state snapshot (runs, job_state, outputs, alerts, integrations) as one JSON document")
    .option("--format <format>", "output format (json)", "json")
    .option("--output <file>", "write to this file instead of stdout")
    .option("--include-logs", "also every run's log lines (can be large)")
    .action(async (opts: { format: string; output?: string; includeLogs?: boolean }, cmd: Command) => {
      if (opts.format.toLowerCase() !== "json") throw new UsageError(`--format supports json, got "${opts.format}"`, "see 'svc export --help'");
      // Checked first: a path that cannot be written fails before the whole snapshot is built.
      const path = opts.output === undefined ? null : checkOutputFile(ctx.cwd, opts.output);
      const client = await clientFor(cmd, ctx);
      const doc = await snapshot(client);
      // Written piece by piece, the run logs read one run at a time: one string of the whole document
      // passes V8's longest string (~512 MB) at some 600,000 runs, and logs are most of a large export.
      const fd = path === null ? null : openSync(path, "w", 0o600);
      const write = fd === null ? (text: string) => ctx.output.out(text) : (text: string) => void writeSync(fd, text);
      try {
        await writeDocument(write, doc, opts.includeLogs === true ? (run) => allLines(client, run) : null);
      } finally {
        if (fd !== null) closeSync(fd);
      }
      if (path !== null) ctx.output.err(`svc: wrote ${doc.runs.length} runs to ${opts.output}\n`);
    });
}

/**
 * `doc` as `JSON.stringify(doc, null, 2)` writes it, field by field, then with `logsOf` a `run_logs` list
 * written one run at a time ({run_id, lines} for each run, in id order).
 */
export async function writeDocument(write: (text: string) => void, doc: Record<string, unknown> & { runs: RunRecord[] }, logsOf: ((runId: number) => Promise<unknown[]>) | null): Promise<void> {
  const at = (json: string, pad: string) => json.replace(/\n/g, `\n${pad}`);
  // A list element by element (a million runs is one string too many), anything else whole.
  const list = async (key: string, items: readonly unknown[], item: (x: unknown) => unknown | Promise<unknown>, last: boolean) => {
    write(`  ${JSON.stringify(key)}: [`);
    for (const [i, x] of items.entries()) write(`${i === 0 ? "" : ","}\n    ${at(JSON.stringify(await item(x), null, 2), "    ")}`);
    write(`${items.length === 0 ? "]" : "\n  ]"}${last ? "" : ","}\n`);
  };
  const entries = Object.entries(doc);
  write("{\n");
  for (const [i, [key, value]] of entries.entries()) {
    const last = i === entries.length - 1 && logsOf === null;
    if (Array.isArray(value)) await list(key, value, (x) => x, last);
    else write(`  ${JSON.stringify(key)}: ${at(JSON.stringify(value, null, 2), "  ")}${last ? "" : ","}\n`);
  }
  if (logsOf !== null) await list("run_logs", doc.runs, async (run) => ({ run_id: (run as RunRecord).id, lines: await logsOf((run as RunRecord).id) }), true);
  write("}\n");
}

export async function snapshot(client: DaemonClient) {
  const exportedAt = new Date().toISOString();
  const daemon = await client.get<DaemonInfo>("/api/daemon/info");
  const config = await client.get<unknown>("/api/config");
  const { jobs } = await client.get<JobsAnswer>("/api/jobs");
  const jobState = await pages<Record<string, unknown>>(client, "/api/db/job_state");
  const runs = (await slices<RunRecord>(client, "/api/audit", { until: exportedAt }, "runs")).sort((a, b) => a.id - b.id);
  const outputs = byId(await slices<{ id: number }>(client, "/api/db/run_outputs"));
  const alerts = byId(await slices<{ id: number }>(client, "/api/db/alerts"));
  const { integrations } = await client.get<{ integrations: Integration[] }>("/api/integrations");
  const backfills = (await slices<{ id: number }>(client, "/api/backfills", {}, "backfills")).sort((a, b) => a.id - b.id);
  const doc = {
    format: "svc-export",
    format_version: EXPORT_FORMAT_VERSION,
    exported_at: exportedAt,
    daemon,
    config,
    jobs,
    job_state: jobState,
    runs,
    outputs,
    alerts,
    integrations,
    backfills,
  };
  return doc;
}

/** `{rows|runs, total, limit, offset}` routes, all of it. */
async function slices<T>(client: DaemonClient, path: string, query: Query = {}, key = "rows"): Promise<T[]> {
  const out: T[] = [];
  for (let offset = 0; ; ) {
    const page = await client.get<Slice<T> & AuditAnswer>(path, { ...query, limit: LIMIT, offset });
    const rows = (page as unknown as Record<string, T[]>)[key] ?? [];
    out.push(...rows);
    offset += rows.length;
    if (rows.length === 0 || offset >= page.total) return out;
  }
}

/** `{rows, total, page, page_size}` routes, all of it. */
async function pages<T>(client: DaemonClient, path: string): Promise<T[]> {
  const out: T[] = [];
  for (let page = 1; ; page++) {
    const p = await client.get<{ rows: T[]; total: number }>(path, { page, page_size: PAGE_SIZE });
    out.push(...p.rows);
    if (p.rows.length < PAGE_SIZE || out.length >= p.total) return out;
  }
}

/** Rows read newest first while new ones arrive can repeat: keep one per id, oldest first. */
function byId<T extends { id: number }>(rows: T[]): T[] {
  return [...new Map(rows.map((r) => [r.id, r])).values()].sort((a, b) => a.id - b.id);
}
