import { IANAZone } from "luxon";
import { describe, expect, it } from "vitest";
import { systemZone as scheduleSystemZone } from "../schedule/nextRun.js";
import { deepFreeze, isKnownZone, systemZone } from "./values.js";

describe("timezone checks agree with luxon and the schedule module", () => {
  it.each([
    "UTC",
    "utc",
    "Etc/UTC",
    "Europe/Berlin",
    "europe/berlin",
    "America/New_York",
    "America/Argentina/Buenos_Aires",
    "Asia/Kolkata",
    "Australia/Lord_Howe",
    "EST5EDT",
    "Etc/GMT+5",
    "GMT",
    "Z",
    "+05:00",
    "GMT+1",
    "Mars/Olympus",
    "Europe/Atlantis",
    "",
    " ",
    "Europe/Berlin ",
  ])("%j", (zone) => {
    expect(isKnownZone(zone)).toBe(IANAZone.isValidZone(zone));
  });

  it("every zone the runtime lists is valid for luxon too", () => {
    for (const zone of Intl.supportedValuesOf("timeZone")) expect(IANAZone.isValidZone(zone), zone).toBe(true);
  });

  it("system zone", () => {
    expect(systemZone()).toBe(scheduleSystemZone());
  });
});

describe("deepFreeze", () => {
  it("freezes nested objects and arrays, not Maps' contents", () => {
    const m = new Map([["k", { x: 1 }]]);
    const v = deepFreeze({ a: [{ b: 1 }], c: { d: "e" }, m });
    expect(Object.isFrozen(v.a[0])).toBe(true);
    expect(Object.isFrozen(v.c)).toBe(true);
    expect(Object.isFrozen(m.get("k"))).toBe(false);
  });
});
