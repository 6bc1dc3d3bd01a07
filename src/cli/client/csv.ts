/** `svc audit --export csv` (CONTRACT §1's header), on the shared RFC 4180 writer. */
import { AUDIT_CSV_COLUMNS, csvRecord } from "../../shared/csv.js";
import type { RunRecord } from "./types.js";

export { AUDIT_CSV_COLUMNS, csvField, csvRecord, parseCsv } from "../../shared/csv.js";

export function auditCsvHeader(): string {
  return csvRecord(AUDIT_CSV_COLUMNS);
}

export function auditCsvRow(run: RunRecord): string {
  return csvRecord(AUDIT_CSV_COLUMNS.map((c) => run[c]));
}
