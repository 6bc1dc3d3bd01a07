import { AUDIT_CSV_COLUMNS, csvField } from "../../shared/csv.js";

export function toCsv(header: readonly string[], rows: readonly Record<string, unknown>[]): string {
  const lines = [header.join(",")];
  for (const row of rows) lines.push(header.map((h) => csvField(row[h])).join(","));
  return `${lines.join("\r\n")}\r\n`;
}

/** Header of `svc audit --export csv` (CONTRACT §1). */
export const AUDIT_CSV_HEADER = AUDIT_CSV_COLUMNS;

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
