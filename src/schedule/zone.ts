import { IANAZone } from "luxon";

/**
 * Time-zone data for the schedule math, read from luxon's `IANAZone` (which
 * reads the runtime's ICU tz database) and memoised, because one raw
 * `IANAZone.offset` call costs about 8 µs here (an Intl `formatToParts`) and
 * a next-run computation needs several.
 *
 * The memo works in fixed UTC blocks of BLOCK_MS (one UTC day). For each block
 * it asks luxon for the offset at both ends; when they differ it
 * binary-searches the change to the second. Invariant this relies on: a
 * zone's offset changes at most once within a block. In tzdata 2025b the
 * closest two offset changes of any zone since 1900 are 95 hours apart
 * (Africa/Freetown, 1939), and 167 hours since 1970 (Brazil, 2000), measured
 * from the TZif files. `zone.test.ts` cross-checks the memo against raw
 * luxon offsets.
 */

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
const BLOCK_MS = DAY_MS;
/** Bounds memory in a long-lived daemon; the memo is simply rebuilt. */
const MAX_CACHED_BLOCKS = 20_000;
const MAX_CACHED_NAMES = 20_000;

/** One stretch of time during which the zone's UTC offset is constant. */
export interface Segment {
  start: number; // epoch ms, inclusive
  end: number; // epoch ms, exclusive
  offsetMs: number; // local wall time = instant + offsetMs
}

interface Block {
  start: number;
  /** Offset from `start` until `change` (exclusive). */
  before: number;
  /** First instant with offset `after`; `start + BLOCK_MS` when nothing changes. */
  change: number;
  after: number;
}

/** Locales whose short zone names are tried in order (see abbreviation()). */
const NAME_LOCALES = ["en-US", "en-GB", "en-AU", "en-IN"];

export class ZoneInfo {
  readonly name: string;
  private readonly iana: IANAZone;
  private readonly blocks = new Map<number, Block>();
  private readonly names = new Map<number, string>();
  private readonly nameFormats: Intl.DateTimeFormat[];

  constructor(name: string) {
    this.name = name;
    this.iana = IANAZone.create(name);
    // Same options as luxon's `offsetNameShort` (util.parseZoneInfo), kept
    // per zone: luxon builds a new formatter per call (~150 µs). en-US names
    // only American zones; the other locales supply the usual letters
    // elsewhere (CET, AEDT, IST), tried in order when en-US says "GMT+1".
    this.nameFormats = NAME_LOCALES.map(
      (locale) =>
        new Intl.DateTimeFormat(locale, {
          timeZoneName: "short",
          hourCycle: "h23",
          year: "numeric",
          month: "2-digit",
          day: "2-digit",
          hour: "2-digit",
          minute: "2-digit",
          timeZone: name,
        }),
    );
  }

  /** UTC offset in ms at the instant `at`. */
  offsetMs(at: number): number {
    const b = this.block(Math.floor(at / BLOCK_MS));
    return at < b.change ? b.before : b.after;
  }

  /**
   * The constant-offset segments covering [from, to], in order, adjacent
   * segments with equal offsets merged.
   */
  segments(from: number, to: number): Segment[] {
    const out: Segment[] = [];
    const last = Math.floor(to / BLOCK_MS);
    for (let i = Math.floor(from / BLOCK_MS); i <= last; i++) {
      const b = this.block(i);
      const end = b.start + BLOCK_MS;
      pushSegment(out, b.start, b.change, b.before);
      pushSegment(out, b.change, end, b.after);
    }
    return out;
  }

  /** The segment containing `at`. */
  segmentAt(at: number): Segment {
    const segs = this.segments(at, at);
    for (const s of segs) if (at >= s.start && at < s.end) return s;
    throw new Error(`schedule: no offset segment for ${at} in ${this.name}`);
  }

  /** The zone abbreviation at `at`: "EDT", "CET", "AEDT", "IST", or "GMT+9" where no locale has letters. */
  abbreviation(at: number): string {
    const offsetMs = this.offsetMs(at);
    // An abbreviation belongs to an offset period; keyed by day too, so a
    // renamed abbreviation with an unchanged offset is still picked up.
    const key = Math.floor(at / DAY_MS) * 200_000 + Math.round(offsetMs / 1000) + 100_000;
    let name = this.names.get(key);
    if (name === undefined) {
      if (this.names.size >= MAX_CACHED_NAMES) this.names.clear();
      name = this.lettersName(at) ?? formatOffset(offsetMs);
      this.names.set(key, name);
    }
    return name;
  }

  /** The first locale's name that is letters (EST, CET), else en-US's "GMT+9" form. */
  private lettersName(at: number): string | undefined {
    let fallback: string | undefined;
    for (const f of this.nameFormats) {
      const v = f.formatToParts(at).find((p) => p.type === "timeZoneName")?.value;
      if (v === undefined) continue;
      if (!/^(GMT|UTC)[+-]/.test(v)) return v;
      fallback ??= v;
    }
    return fallback;
  }

  private rawOffsetMs(at: number): number {
    return Math.round(this.iana.offset(at) * MINUTE_MS);
  }

  private block(index: number): Block {
    let b = this.blocks.get(index);
    if (b !== undefined) return b;
    if (this.blocks.size >= MAX_CACHED_BLOCKS) this.blocks.clear();
    const start = index * BLOCK_MS;
    const end = start + BLOCK_MS;
    const before = this.blocks.get(index - 1)?.after ?? this.rawOffsetMs(start);
    const after = this.blocks.get(index + 1)?.before ?? this.rawOffsetMs(end);
    let change = end;
    if (before !== after) {
      // Offsets change on whole seconds; luxon truncates instants to seconds.
      let lo = start;
      let hi = end;
      while (hi - lo > 1000) {
        const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
        if (this.rawOffsetMs(mid) === before) lo = mid;
        else hi = mid;
      }
      change = hi;
    }
    b = { start, before, change, after };
    this.blocks.set(index, b);
    return b;
  }
}

function pushSegment(out: Segment[], start: number, end: number, offsetMs: number): void {
  if (end <= start) return;
  const prev = out[out.length - 1];
  if (prev !== undefined && prev.offsetMs === offsetMs && prev.end === start) prev.end = end;
  else out.push({ start, end, offsetMs });
}

/** "+05:30", "-04:00" (seconds only when the offset has them, as in LMT). */
export function formatOffset(offsetMs: number): string {
  const sign = offsetMs < 0 ? "-" : "+";
  const total = Math.round(Math.abs(offsetMs) / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return `${sign}${pad2(h)}:${pad2(m)}${s === 0 ? "" : `:${pad2(s)}`}`;
}

export function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

const zones = new Map<string, ZoneInfo>();

/** An instant as local time in `zone`, "2027-03-14T03:00:00-04:00 EDT" (ScheduledSlot.local, the API's *_local fields). */
export function localIso(zone: ZoneInfo, at: number): string {
  const offsetMs = zone.offsetMs(at);
  return `${new Date(at + offsetMs).toISOString().slice(0, 19)}${formatOffset(offsetMs)} ${zone.abbreviation(at)}`;
}

/** The memoised zone; throws a clear error for an unknown identifier. */
export function zoneInfo(name: string): ZoneInfo {
  let z = zones.get(name);
  if (z === undefined) {
    if (!isValidZone(name)) {
      throw new Error(`unknown time zone "${name}": use an IANA identifier such as "Europe/Berlin" or "UTC"`);
    }
    z = new ZoneInfo(name);
    zones.set(name, z);
  }
  return z;
}

/** True for an identifier the runtime's tz database knows ("America/New_York", "UTC"). */
export function isValidZone(zone: string): boolean {
  return typeof zone === "string" && zone.length > 0 && IANAZone.isValidZone(zone);
}

/** The machine's zone (honours `TZ`), the last step of the timezone fallback. */
export function systemZone(): string {
  const zone = new Intl.DateTimeFormat().resolvedOptions().timeZone;
  return zone !== undefined && isValidZone(zone) ? zone : "UTC";
}
