/**
 * RFC 4180 CSV, shared by `svc audit --export csv` and the dashboard's audit
 * export: records end in CRLF; a field holding a comma, a double quote, CR or
 * LF is enclosed in double quotes with quotes doubled; null is an empty field.
 *
 * A text value that starts with `=`, `+`, `-`, `@`, TAB or CR gets a leading
 * `'` (OWASP's "CSV injection" advice): a spreadsheet would otherwise run it
 * as a formula, and a run's `reason`, `triggered_by` or `error` is text
 * that anyone who can trigger a run chooses. Numbers are written as they are
 * (an exit code of -1 stays `-1`).
 */

/**
 * The header of an audit export: CONTRACT §1's columns, then `error` (why a
 * run failed or was skipped, as the tables show it) and CONTRACT §7.2/§7.3's
 * `params` (JSON, secret values `***`), `scheduled_at` and `backfill_id`,
 * appended so that a reader of the CONTRACT columns by position is not
 * disturbed.
 */
export const AUDIT_CSV_COLUMNS = [
  "id",
  "job_name",
  "status",
  "trigger",
  "triggered_by",
  "reason",
  "attempt",
  "started_at",
  "finished_at",
  "duration_ms",
  "exit_code",
  "sla_breached",
  "hc_status",
  "cycle_id",
  "error",
  "params",
  "scheduled_at",
  "backfill_id",
] as const;

const FORMULA_START = /^[=+\-@\t\r]/;

export function csvField(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text = typeof value === "string" ? value : typeof value === "object" ? JSON.stringify(value) : String(value);
  const s = typeof value === "string" && FORMULA_START.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvRecord(values: readonly unknown[]): string {
  return `${values.map(csvField).join(",")}\r\n`;
}

/** Parses RFC 4180 text back into records (for tests and round trips). */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = "";
  let record: string[] = [];
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (ch === '"') {
        quoted = false;
        i++;
      } else {
        field += ch;
        i++;
      }
    } else if (ch === '"') {
      quoted = true;
      i++;
    } else if (ch === ",") {
      record.push(field);
      field = "";
      i++;
    } else if (ch === "\r" && text[i + 1] === "\n") {
      record.push(field);
      records.push(record);
      record = [];
      field = "";
      i += 2;
    } else {
      field += ch;
      i++;
    }
  }
  if (field !== "" || record.length > 0) {
    record.push(field);
    records.push(record);
  }
  return records;
}
