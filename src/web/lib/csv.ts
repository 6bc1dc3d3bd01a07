/** RFC 4180: CRLF line ends; fields with a comma, quote, CR or LF are quoted, quotes doubled. */
export function csvField(v: unknown): string {
  if (v === null || v === undefined) return "";
  const s = typeof v === "object" ? JSON.stringify(v) : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(header: readonly string[], rows: readonly Record<string, unknown>[]): string {
  const lines = [header.join(",")];
  for (const row of rows) lines.push(header.map((h) => csvField(row[h])).join(","));
  return `${lines.join("\r\n")}\r\n`;
}

/** Header of `svc audit --export csv` (CONTRACT §1). */
export const AUDIT_CSV_HEADER = [
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
] as const;

export function download(filename: string, text: string, type = "text/csv"): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
