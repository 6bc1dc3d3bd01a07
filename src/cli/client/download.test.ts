import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DaemonClient } from "./http.js";
import type { Target } from "./target.js";

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A real HTTP server on 127.0.0.1 that answers every request with `handler`; a client for it and a temp dir. */
async function rig(handler: Parameters<typeof createServer>[1]): Promise<{ client: DaemonClient; dir: string }> {
  const server: Server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  const dir = mkdtempSync(join(tmpdir(), "svc-download-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  const target = { kind: "http", url, source: "--addr", token: null, tls: { ca: null, cert: null, key: null } } as unknown as Target;
  return { client: new DaemonClient(target, 5_000), dir };
}

describe("DaemonClient.download", () => {
  it("writes the body to the file", async () => {
    const { client, dir } = await rig((_req, res) => res.end("SQLite format 3\0 and the rest"));
    const r = await client.download("POST", "/api/db/backup", join(dir, "copy.db"));
    expect(r.bytes).toBe(29);
    expect(readFileSync(join(dir, "copy.db"), "utf8")).toBe("SQLite format 3\0 and the rest");
  });

  it("a body cut short of its Content-Length fails with a clear error, and leaves no file (not even the partial one)", async () => {
    const { client, dir } = await rig((_req, res) => {
      res.writeHead(200, { "content-length": "1000" });
      res.write("SQLite format 3\0 only part of it");
      setTimeout(() => res.socket?.destroy(), 50);
    });
    const dest = join(dir, "copy.db");
    const err = await client.download("POST", "/api/db/backup", dest).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/^the daemon closed the connection during POST \/api\/db\/backup: it stopped or crashed/);
    expect(existsSync(dest)).toBe(false);
    expect(existsSync(`${dest}.partial`)).toBe(false);
  });
});
