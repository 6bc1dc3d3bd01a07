import { describe, expect, it } from "vitest";
import type { RunStatus } from "../store/types.js";
import { entriesFor, type NotifyPayload } from "./rules.js";
import { entry, run } from "./testkit.js";

function ev(event: NotifyPayload["event"], more: { fallbackToFailure?: boolean; previousStatus?: RunStatus | null } = {}): NotifyPayload {
  return { event, run: run(), fallbackToFailure: more.fallbackToFailure ?? false, previousStatus: more.previousStatus ?? null };
}

describe("entriesFor", () => {
  const fail = [entry("a:#1"), entry("b:#2")];
  it("returns every entry of the event", () => {
    expect(entriesFor({ on_failure: fail }, ev("on_failure"))).toEqual(fail);
    expect(entriesFor({ on_failure: fail }, ev("on_retry"))).toEqual([]);
  });

  it("suppresses only_after_failure success entries unless the previous run FAILED", () => {
    const always = entry("a:#always");
    const recovered = entry("a:#recovered", { onlyAfterFailure: true });
    const notify = { on_success: [always, recovered] };
    expect(entriesFor(notify, ev("on_success", { previousStatus: "SUCCESS" }))).toEqual([always]);
    expect(entriesFor(notify, ev("on_success", { previousStatus: null }))).toEqual([always]);
    expect(entriesFor(notify, ev("on_success", { previousStatus: "FAILED" }))).toEqual([always, recovered]);
  });

  it("falls back from on_sla_breach to on_failure only when asked and when it has no entries", () => {
    const sla = [entry("a:#sla")];
    expect(entriesFor({ on_failure: fail }, ev("on_sla_breach", { fallbackToFailure: true }))).toEqual(fail);
    expect(entriesFor({ on_failure: fail, on_sla_breach: [] }, ev("on_sla_breach", { fallbackToFailure: true }))).toEqual(fail);
    expect(entriesFor({ on_failure: fail }, ev("on_sla_breach", { fallbackToFailure: false }))).toEqual([]);
    expect(entriesFor({ on_failure: fail, on_sla_breach: sla }, ev("on_sla_breach", { fallbackToFailure: true }))).toEqual(sla);
  });
});
