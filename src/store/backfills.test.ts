import { describe, expect, it } from "vitest";
import { tempStore } from "../../test/helpers/tempStore.js";
import { runTo } from "./testkit.js";

const store = tempStore("file");

describe("backfills.create", () => {
  it("returns each run's record exactly as runs.getMany reads it back (params masked, tags, slots, claims), each its own object", () => {
    // A run that already holds one slot: the backfill reruns it without claiming it again.
    runTo(store, "SUCCESS", { job_name: "bf-records", scheduled_for: "2026-11-01T02:00:00.000Z", scheduled_at: "2026-11-01T02:00:00.000Z" });
    const slots = ["2026-11-01T00:00:00.000Z", "2026-11-01T01:00:00.000Z", "2026-11-01T02:00:00.000Z", "2026-11-01T03:00:00.000Z"];
    const { backfill, runs } = store.backfills.create(
      {
        job_name: "bf-records",
        from: "2026-11-01T00:00:00.000Z",
        to: "2026-11-01T04:00:00.000Z",
        reason: "fix of 1 Nov",
        params: { region: "eu", pin: "9911", n: 3 },
        secretParams: ["pin"],
        rerun: true,
        ignore_exclude: false,
        parallel: 2,
        total: slots.length,
        created_by: "token:abc",
        created_at: "2026-11-25T02:00:00.000Z",
      },
      slots.map((s, i) => ({ scheduled_at: s, cycle_id: `c-${i}`, scheduled_for: i === 2 ? null : s })),
      ["etl", "nightly"],
    );
    expect(runs.map((r) => r.scheduled_at)).toEqual(slots);
    expect(runs.map((r) => r.scheduled_for)).toEqual([slots[0], slots[1], null, slots[3]]);
    expect(runs[0]).toMatchObject({ status: "PENDING", trigger: "backfill", backfill_id: backfill.id, params: { region: "eu", pin: "***", n: 3 }, tags: ["etl", "nightly"] });
    expect(runs).toEqual(store.runs.getMany(runs.map((r) => r.id)).sort((a, b) => a.id - b.id));
    // A listener that changes the record it is given changes no other run's.
    runs[0]!.params.region = "us";
    runs[0]!.tags.push("changed");
    expect(runs[1]!.params.region).toBe("eu");
    expect(runs[1]!.tags).toEqual(["etl", "nightly"]);
  });
});
