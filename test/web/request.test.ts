/**
 * The dashboard's API client (src/web/lib/api.ts) with its seams replaced: the token store and fetch. A 401 to
 * a request sent with a token that has since been replaced (a sign-in while it was in flight) is retried with
 * the new token, not turned into a second sign-in prompt.
 */
import { afterEach, describe, expect, it, vi } from "vitest";

const auth = vi.hoisted(() => ({ token: "wrong" as string | null, prompts: 0 }));
vi.mock("../../src/web/lib/auth.js", () => ({
  getToken: () => auth.token,
  waitForToken: () => {
    auth.prompts++;
    return new Promise(() => undefined); // a prompt the test never answers
  },
}));
vi.mock("../../src/web/lib/base.js", () => ({ apiUrl: (p: string) => `http://svc.test/${p}` }));

// Loaded by a path TypeScript does not follow: this file is type-checked with Node's types, the module with the DOM's.
const MODULE = "../../src/web/lib/api.js";
const { request } = (await import(MODULE)) as { request<T>(method: "GET", path: string): Promise<T> };

afterEach(() => vi.unstubAllGlobals());

describe("request", () => {
  it("a 401 to a token replaced meanwhile is retried with the new one, without a prompt", async () => {
    const sent: (string | undefined)[] = [];
    vi.stubGlobal("fetch", async (_url: string, init: { headers: Record<string, string> }) => {
      sent.push(init.headers.Authorization);
      if (init.headers.Authorization === "Bearer wrong") {
        auth.token = "right"; // the user signed in while this request was in flight
        return new Response('{"error":{"code":"unauthorized","message":"bad token"}}', { status: 401 });
      }
      return new Response('{"ok":true}', { status: 200 });
    });
    await expect(request("GET", "api/status")).resolves.toEqual({ ok: true });
    expect(sent).toEqual(["Bearer wrong", "Bearer right"]);
    expect(auth.prompts).toBe(0);
  });
});
