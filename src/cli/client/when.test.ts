/** parseWhen: journalctl-style times for --since/--until, with a fixed now. */
import { describe, expect, it } from "vitest";
import { parseWhen, sinceUntil, WHEN_HELP } from "./when.js";

const NOW = new Date("2026-11-22T10:30:00.000Z");

describe("parseWhen", () => {
  it("a time ago: 1h, 30m, 2d, 1h30m, -1h, 1h ago, 1w", () => {
    expect(parseWhen("1h", NOW)).toBe("2026-11-22T09:30:00.000Z");
    expect(parseWhen("30m", NOW)).toBe("2026-11-22T10:00:00.000Z");
    expect(parseWhen("2d", NOW)).toBe("2026-11-20T10:30:00.000Z");
    expect(parseWhen("1h30m", NOW)).toBe("2026-11-22T09:00:00.000Z");
    expect(parseWhen("-1h", NOW)).toBe("2026-11-22T09:30:00.000Z");
    expect(parseWhen("1h ago", NOW)).toBe("2026-11-22T09:30:00.000Z");
    expect(parseWhen("1w", NOW)).toBe("2026-11-15T10:30:00.000Z");
  });

  it("today, yesterday and tomorrow are local midnights (the machine's TZ); now is now", () => {
    const midnight = new Date(NOW.getFullYear(), NOW.getMonth(), NOW.getDate());
    expect(parseWhen("today", NOW)).toBe(midnight.toISOString());
    expect(parseWhen("Yesterday", NOW)).toBe(new Date(midnight.getFullYear(), midnight.getMonth(), midnight.getDate() - 1).toISOString());
    expect(parseWhen("tomorrow", NOW)).toBe(new Date(midnight.getFullYear(), midnight.getMonth(), midnight.getDate() + 1).toISOString());
    expect(parseWhen("now", NOW)).toBe(NOW.toISOString());
  });

  it("ISO dates pass through; instants are read with their zone (the tables' form too); anything else is null", () => {
    expect(parseWhen("2026-11-01", NOW)).toBe("2026-11-01");
    expect(parseWhen("2026-11-01T12:00:00Z", NOW)).toBe("2026-11-01T12:00:00.000Z");
    expect(parseWhen("2026-11-22 08:30:00 +01:00", NOW)).toBe("2026-11-22T07:30:00.000Z");
    expect(parseWhen("2026-11-22T08:30+0100", NOW)).toBe("2026-11-22T07:30:00.000Z");
    for (const bad of ["last tuesday", "1x", "h", "2026-13-45", "", "2026-02-30", "2026-11-01 24:00", "2026-11-01T12:00:00+25:00"]) expect(parseWhen(bad, NOW), bad).toBeNull();
  });

  it("a date and time without a zone is the machine's (TZ), not the daemon's", () => {
    expect(parseWhen("2026-11-01 12:00", NOW)).toBe(new Date(2026, 10, 1, 12, 0).toISOString());
    expect(parseWhen("2026-11-01T12:00:30.5", NOW)).toBe(new Date(2026, 10, 1, 12, 0, 30, 500).toISOString());
  });
});

describe("sinceUntil", () => {
  const usage = (m: string) => new Error(m);

  it("reads both flags with parseWhen and leaves an absent one undefined", () => {
    expect(sinceUntil({ since: "1h", until: "2026-11-22" }, usage, NOW)).toEqual({ since: "2026-11-22T09:30:00.000Z", until: "2026-11-22" });
    expect(sinceUntil({}, usage, NOW)).toEqual({ since: undefined, until: undefined });
  });

  it("names the flag and the value it cannot read", () => {
    expect(() => sinceUntil({ since: "1h", until: "last tuesday" }, usage, NOW)).toThrow(`--until must be ${WHEN_HELP}, got "last tuesday"`);
    expect(() => sinceUntil({ since: "soon" }, usage, NOW)).toThrow(/^--since must be .*, got "soon"$/);
  });
});
