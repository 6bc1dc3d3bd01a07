import { describe, expect, it } from "vitest";
import { EventBus } from "../engine/events.js";
import { silentLogger } from "../shared/logger.js";
import type { RunRecord } from "../store/types.js";
import { ViewCache } from "./viewCache.js";

function setup() {
  let now = 1_000_000;
  const bus = new EventBus(silentLogger);
  const cache = new ViewCache(bus, 30_000, () => now);
  let builds = 0;
  const get = (expiresAt?: number) => cache.get("k", () => ({ value: ++builds, expiresAt }));
  return { bus, cache, get, advance: (ms: number) => (now += ms), at: () => now };
}

describe("ViewCache", () => {
  it("serves the cached view until an event that can change it", () => {
    const { bus, get } = setup();
    expect(get()).toBe(1);
    expect(get()).toBe(1);
    bus.emit("run:status", { run: { id: 1 } as RunRecord, from: null });
    expect(get()).toBe(2);
    bus.emit("config:reloaded", { jobs: 3 });
    expect(get()).toBe(3);
    bus.emit("run:logs", { lines: [] }); // log lines change no cached view
    expect(get()).toBe(3);
  });

  it("drops the view on invalidate(), at its own expiry and after the safety bound", () => {
    const { cache, get, advance, at } = setup();
    expect(get()).toBe(1);
    cache.invalidate();
    expect(get(at() + 500)).toBe(2);
    advance(499);
    expect(get()).toBe(2);
    advance(1);
    expect(get()).toBe(3);
    advance(29_999);
    expect(get()).toBe(3);
    advance(1);
    expect(get()).toBe(4);
  });

  it("releases its bus listeners on close", () => {
    const { bus, cache } = setup();
    const count = () => (bus as unknown as { listeners: Map<string, Set<unknown>> }).listeners.get("run:status")?.size ?? 0;
    expect(count()).toBe(1);
    cache.close();
    expect(count()).toBe(0);
  });
});
