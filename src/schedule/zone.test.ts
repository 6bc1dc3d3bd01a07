import { existsSync, readFileSync } from "node:fs";
import { DateTime, IANAZone } from "luxon";
import { describe, expect, it } from "vitest";
import { ZoneInfo } from "./zone.js";
import { mulberry32 } from "../../test/helpers/mulberry32.js";

/** Offset changes (epoch s, new offset s) from a TZif file's 64-bit section (RFC 8536). */
function tzifChanges(file: string): Array<[number, number]> {
  const buf = readFileSync(file);
  const counts = (o: number) => [20, 24, 28, 32, 36, 40].map((k) => buf.readUInt32BE(o + k)) as [number, number, number, number, number, number];
  const [isut1, isstd1, leap1, time1, type1, char1] = counts(0);
  let o = 44 + time1 * 5 + type1 * 6 + char1 + leap1 * 8 + isstd1 + isut1;
  const [, , , timecnt, typecnt] = counts(o);
  o += 44;
  const types = Array.from({ length: typecnt }, (_, i) => buf.readInt32BE(o + timecnt * 9 + i * 6));
  const out: Array<[number, number]> = [];
  let prev = types[0];
  for (let i = 0; i < timecnt; i++) {
    const offset = types[buf[o + timecnt * 8 + i]!]!;
    if (offset !== prev) out.push([Number(buf.readBigInt64BE(o + i * 8)), offset]);
    prev = offset;
  }
  return out;
}

const rawOffsetMs = (zone: string, t: number) => Math.round(IANAZone.create(zone).offset(t) * 60_000);
const FROM = Date.UTC(1970, 0, 1);
const TO = Date.UTC(2040, 0, 1);

describe("ZoneInfo: the memo agrees with luxon", () => {
  it("offsets at random instants 1970-2040 in every zone the runtime knows", () => {
    const random = mulberry32(7);
    const mismatches: string[] = [];
    for (const name of Intl.supportedValuesOf("timeZone")) {
      const zone = new ZoneInfo(name);
      for (let i = 0; i < 8; i++) {
        const t = Math.floor(FROM + random() * (TO - FROM));
        if (zone.offsetMs(t) !== rawOffsetMs(name, t)) mismatches.push(`${name} ${new Date(t).toISOString()}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it("finds each transition to the second, and agrees every 10 minutes around it", () => {
    const mismatches: string[] = [];
    for (const name of ["America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Pacific/Chatham", "America/Santiago", "Africa/Casablanca"]) {
      const zone = new ZoneInfo(name);
      const segs = zone.segments(Date.UTC(2024, 0, 1), Date.UTC(2030, 0, 1));
      expect(segs.length, name).toBeGreaterThan(8);
      for (const s of segs.slice(1)) {
        const t = s.start;
        if (rawOffsetMs(name, t) !== s.offsetMs || rawOffsetMs(name, t - 1000) === s.offsetMs) {
          mismatches.push(`${name}: change not at ${new Date(t).toISOString()}`);
        }
        for (let d = -3 * 3_600_000; d <= 3 * 3_600_000; d += 600_000) {
          if (zone.offsetMs(t + d) !== rawOffsetMs(name, t + d)) mismatches.push(`${name} ${new Date(t + d).toISOString()}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
  });

  it(
    "the memo's invariant holds in the machine's tz data: offset changes are more than a day apart since 1900",
    (ctx) => {
      ctx.skip(!existsSync("/usr/share/zoneinfo/America/New_York"), "needs the system's tz data in /usr/share/zoneinfo (apt-get install tzdata)");
      const closest: Array<[number, string]> = [];
      for (const name of Intl.supportedValuesOf("timeZone")) {
        const file = `/usr/share/zoneinfo/${name}`;
        if (!existsSync(file)) continue;
        const changes = tzifChanges(file).filter(([t]) => t >= Date.UTC(1900, 0, 1) / 1000);
        for (let i = 1; i < changes.length; i++) closest.push([(changes[i]![0] - changes[i - 1]![0]) / 3600, name]);
      }
      closest.sort((a, b) => a[0] - b[0]);
      expect(closest.length).toBeGreaterThan(1000);
      expect(closest[0]![0], closest[0]![1]).toBeGreaterThan(48);
    },
  );

  it("segments are contiguous, ordered and merged", () => {
    const segs = new ZoneInfo("America/New_York").segments(Date.UTC(2027, 0, 1), Date.UTC(2028, 0, 1));
    expect(segs.map((s) => [new Date(s.start).toISOString(), s.offsetMs / 3_600_000])).toEqual([
      ["2027-01-01T00:00:00.000Z", -5], // blocks start on UTC midnights
      ["2027-03-14T07:00:00.000Z", -4],
      ["2027-11-07T06:00:00.000Z", -5],
    ]);
    for (let i = 1; i < segs.length; i++) expect(segs[i]!.start).toBe(segs[i - 1]!.end);
  });

  it("abbreviations are luxon's offsetNameShort in the first locale that has letters for the zone", () => {
    const random = mulberry32(11);
    // One ZoneInfo per zone over many days: the locale remembered per offset must give the same
    // names as a full search, for zones with letters and for zones without any (Tokyo, Sao Paulo...).
    const zones = ["America/New_York", "America/Los_Angeles", "Europe/Berlin", "Europe/London", "Asia/Kolkata", "Australia/Lord_Howe", "UTC", "Pacific/Honolulu"];
    zones.push("Asia/Tokyo", "America/Sao_Paulo", "Europe/Moscow", "Asia/Kathmandu", "Pacific/Chatham", "Africa/Casablanca");
    for (const name of zones) {
      const zone = new ZoneInfo(name);
      for (let i = 0; i < 40; i++) {
        const t = Math.floor(Date.UTC(2000, 0, 1) + random() * (TO - Date.UTC(2000, 0, 1)));
        const names = ["en-US", "en-GB", "en-AU", "en-IN"].map((locale) => DateTime.fromMillis(t, { zone: name, locale }).offsetNameShort);
        const expected = names.find((n) => n !== null && !/^(GMT|UTC)[+-]/.test(n)) ?? names[0];
        expect(zone.abbreviation(t), `${name} ${new Date(t).toISOString()}`).toBe(expected);
      }
    }
  });
});
