import { describe, expect, it } from "vitest";
import { parseInstant } from "./instant.js";

describe("parseInstant", () => {
  it("reads a date (UTC midnight) or a date-time with Z or an offset", () => {
    expect(parseInstant("2026-11-01")).toBe(Date.UTC(2026, 10, 1));
    expect(parseInstant("2026-11-01T06:00:00Z")).toBe(Date.UTC(2026, 10, 1, 6));
    expect(parseInstant("2026-11-01T01:00-05:00")).toBe(Date.UTC(2026, 10, 1, 6));
    expect(parseInstant("2028-02-29T23:59:59.999Z")).toBe(Date.UTC(2028, 1, 29, 23, 59, 59, 999));
    expect(parseInstant("0000-02-29")).toBe(Date.parse("0000-02-29T00:00:00Z")); // year 0 is a leap year
  });

  it("refuses a date or time that does not exist, instead of moving it to another day", () => {
    for (const text of ["2026-02-30", "2026-02-29", "1900-02-29", "2026-04-31", "2026-13-01", "2026-00-10", "2026-11-00", "2026-11-01T24:00Z", "2026-11-01T23:60Z", "2026-11-01T23:59:60Z", "2026-11-01T01:00+24:00"]) {
      expect(parseInstant(text), text).toBeNull();
    }
  });

  it("refuses a date-time without a zone, and other shapes", () => {
    for (const text of ["2026-11-01T06:00", "Nov 1 2026", "2026-1-1", "", "2026-11-01T06:00:00ZZ"]) expect(parseInstant(text), text).toBeNull();
  });
});
