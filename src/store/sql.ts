import type Database from "better-sqlite3";
import type { AlertStatus, LogStream, PageRequest, RunStatus, Trigger } from "./types.js";
import { InvalidQueryError } from "./errors.js";
import { LOG_STREAMS, MAX_OFFSET, MAX_PAGE, RUN_STATUSES, TRIGGERS } from "./types.js";
import { inIsoRange } from "../shared/instant.js";

export type Db = Database.Database;
export type Stmt = Database.Statement;

/**
 * Prepared statements keyed by their SQL text. Static statements are
 * prepared once; queries built from filters (a few dozen shapes) are cached
 * here so a repeated shape is never prepared again.
 */
export class StatementCache {
  private readonly byText = new Map<string, Stmt>();

  constructor(
    private readonly db: Db,
    private readonly max = 512,
  ) {}

  get(sql: string): Stmt {
    let st = this.byText.get(sql);
    if (!st) {
      if (this.byText.size >= this.max) this.byText.clear();
      st = this.db.prepare(sql);
      this.byText.set(sql, st);
    }
    return st;
  }
}

/** A WHERE clause under construction: terms joined with AND, positional params. */
export class Where {
  readonly terms: string[] = [];
  readonly params: unknown[] = [];

  add(term: string, ...params: unknown[]): this {
    this.terms.push(term);
    this.params.push(...params);
    return this;
  }

  sql(): string {
    return this.terms.length ? ` WHERE ${this.terms.join(" AND ")}` : "";
  }
}

export const PAGE_SIZES: readonly number[] = [25, 50, 100];
export const MAX_LIMIT = 10_000;

/**
 * Checks a page request against the table's sortable columns and returns
 * ORDER BY / LIMIT / OFFSET. `sortable` maps the API's column names to SQL;
 * ties are broken by `tieBreak` so pages never overlap or skip rows.
 */
export function pageClause(
  p: PageRequest,
  sortable: Readonly<Record<string, string>>,
  tieBreak: string,
): { orderBy: string; limit: number; offset: number } {
  if (!Number.isInteger(p.page) || p.page < 1 || p.page > MAX_PAGE) {
    throw new InvalidQueryError(`page must be an integer from 1 to ${MAX_PAGE}, got ${String(p.page)}`);
  }
  if (!PAGE_SIZES.includes(p.page_size)) {
    throw new InvalidQueryError(`page_size must be one of ${PAGE_SIZES.join(", ")}, got ${String(p.page_size)}`);
  }
  const col = Object.hasOwn(sortable, p.sort) ? sortable[p.sort] : undefined;
  if (col === undefined) {
    throw new InvalidQueryError(`cannot sort by "${p.sort}": sortable columns are ${Object.keys(sortable).join(", ")}`);
  }
  const dir = orderDir(p.order);
  const orderBy = col === tieBreak ? `${col} ${dir}` : `${col} ${dir}, ${tieBreak} ${dir}`;
  return { orderBy, limit: p.page_size, offset: (p.page - 1) * p.page_size };
}

export function orderDir(order: string): "ASC" | "DESC" {
  const o = String(order).toLowerCase();
  if (o === "asc") return "ASC";
  if (o === "desc") return "DESC";
  throw new InvalidQueryError(`order must be asc or desc, got "${order}"`);
}

export function checkSlice(limit: number, offset: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new InvalidQueryError(`limit must be an integer from 1 to ${MAX_LIMIT}, got ${String(limit)}`);
  }
  if (!Number.isInteger(offset) || offset < 0 || offset > MAX_OFFSET) {
    throw new InvalidQueryError(`offset must be an integer from 0 to ${MAX_OFFSET}, got ${String(offset)}`);
  }
}

function oneOf<T extends string>(what: string, allowed: readonly T[], value: string): T {
  const found = allowed.find((a) => a === value);
  if (found === undefined) throw new InvalidQueryError(`unknown ${what} "${value}": expected one of ${allowed.join(", ")}`);
  return found;
}

/** Enum values arrive in any case (CONTRACT §4); storage is upper case for statuses, lower case for the rest. */
export const normStatus = (s: string): RunStatus => oneOf("status", RUN_STATUSES, String(s).toUpperCase());
export const normTrigger = (s: string): Trigger => oneOf("trigger", TRIGGERS, String(s).toLowerCase());
export const normStream = (s: string): LogStream => oneOf("stream", LOG_STREAMS, String(s).toLowerCase());
export const normAlertStatus = (s: string): AlertStatus =>
  oneOf("alert status", ["pending", "delivered", "failed"] as const, String(s).toLowerCase());

/** An instant or date for since/until, normalised to the stored ISO form so string comparison orders correctly. */
export function normInstant(what: string, s: string): string {
  const ms = Date.parse(s);
  if (Number.isNaN(ms) || !inIsoRange(ms)) throw new InvalidQueryError(`${what} must be an ISO 8601 date or instant between the years 0000 and 9999, got "${s}"`);
  return new Date(ms).toISOString();
}

/** LIKE pattern for a case-insensitive substring match ("\" escapes). */
export function likeContains(s: string): string {
  return `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export function count(st: Stmt, params: unknown[]): number {
  return (st.pluck().get(...params) as number | undefined) ?? 0;
}
