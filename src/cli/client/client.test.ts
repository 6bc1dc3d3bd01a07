/** The client's pure parts: CSV quoting, address parsing, time and duration display. */
import { describe, expect, it } from "vitest";
import { auditCsvHeader, auditCsvRow, csvField, parseCsv } from "./csv.js";
import { cell, duration, localTime, table, styleFor } from "./present.js";
import { parseAddr } from "./target.js";
import type { RunRecord } from "./types.js";

describe("csv (RFC 4180)", () => {
  it("quotes fields with commas, quotes, CR or LF, doubles quotes, leaves the rest", () => {
    expect(csvField("plain")).toBe("plain");
    expect(csvField("a,b")).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField("two\nlines")).toBe('"two\nlines"');
    expect(csvField("cr\r")).toBe('"cr\r"');
    expect(csvField(null)).toBe("");
    expect(csvField(0)).toBe("0");
  });

  it("defuses text a spreadsheet would run as a formula with a leading ', and leaves numbers alone", () => {
    expect(csvField("=HYPERLINK(\"http://x\")")).toBe('"\'=HYPERLINK(""http://x"")"');
    expect(csvField("+1")).toBe("'+1");
    expect(csvField("-cmd")).toBe("'-cmd");
    expect(csvField("@SUM(A1)")).toBe("'@SUM(A1)");
    expect(csvField("\tx")).toBe("'\tx");
    expect(csvField("\rx")).toBe('"\'\rx"');
    expect(csvField(-1)).toBe("-1");
    expect(csvField("a=b")).toBe("a=b");
  });

  it("round-trips audit rows through the parser, CRLF-terminated, with CONTRACT's header", () => {
    const run = {
      id: 7, job_name: "extract", status: "FAILED", trigger: "manual", triggered_by: "cli", reason: 'x, "y"\r\nz', attempt: 2,
      started_at: "2026-11-22T01:00:00.000Z", finished_at: null, duration_ms: 12, exit_code: null, sla_breached: 0, hc_status: null, cycle_id: "c", error: "timeout after 5s",
      params: { day: "2026-11-01", pin: "***" }, scheduled_at: "2026-11-01T00:00:00.000Z", backfill_id: 3,
    } as unknown as RunRecord;
    const text = auditCsvHeader() + auditCsvRow(run);
    expect(text.endsWith("\r\n")).toBe(true);
    const [header, row] = parseCsv(text);
    expect(header!.join(",")).toBe("id,job_name,status,trigger,triggered_by,reason,attempt,started_at,finished_at,duration_ms,exit_code,sla_breached,hc_status,cycle_id,error,params,scheduled_at,backfill_id");
    expect(row).toEqual(["7", "extract", "FAILED", "manual", "cli", 'x, "y"\r\nz', "2", "2026-11-22T01:00:00.000Z", "", "12", "", "0", "", "c", "timeout after 5s", '{"day":"2026-11-01","pin":"***"}', "2026-11-01T00:00:00.000Z", "3"]);
  });
});

describe("parseAddr", () => {
  it("accepts host:port, http(s) URLs and base paths; https for bare addresses when TLS files are set", () => {
    expect(parseAddr("127.0.0.1:8420", "--addr").href).toBe("http://127.0.0.1:8420/");
    expect(parseAddr("https://svc.example:8443/svc", "--addr").href).toBe("https://svc.example:8443/svc/");
    expect(parseAddr("[::1]:8420", "api.addr").href).toBe("http://[::1]:8420/");
    expect(parseAddr("10.0.0.5:8420", "api.addr", { ca: "/ca.pem", cert: null, key: null }).protocol).toBe("https:");
  });

  it("refuses other schemes and garbage as usage errors (exit 2)", () => {
    expect(() => parseAddr("ftp://x", "SVC_ADDR")).toThrow(/SVC_ADDR: "ftp:\/\/x" must be an http/);
    expect(() => parseAddr("http://", "--addr")).toThrow(expect.objectContaining({ exitCode: 2 }));
  });
});

describe("present", () => {
  it("local time with the offset (UTC at zero), durations, one-line cells", () => {
    expect(localTime(null)).toBe("-");
    expect(localTime("2026-11-22T01:02:03.000Z")).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} (UTC|[+-]\d{2}:\d{2})$/);
    expect(duration(850)).toBe("850ms");
    expect(duration(12_400)).toBe("12.4s");
    expect(duration(184_000)).toBe("3m04s");
    expect(duration(7_500_000)).toBe("2h05m");
    expect(duration(null)).toBe("-");
    expect(cell("a\nb  c")).toBe("a b c");
    expect(cell("x".repeat(70), 10)).toBe(`${"x".repeat(9)}…`);
  });

  it("aligns columns by visible width, ignoring colour codes", () => {
    const style = styleFor({ env: { FORCE_COLOR: "1" }, output: { out() {}, err() {} }, cwd: "/", version: "" });
    const t = table(["A", "B"], [[style.red("x"), "1"], ["long", "2"]], style);
    // eslint-disable-next-line no-control-regex
    const plain = t.replace(/\x1b\[[0-9;]*m/g, "").split("\n");
    expect(plain).toEqual(["A     B", "x     1", "long  2"]);
  });
});
