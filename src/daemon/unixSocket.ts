import { chmodSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { applyServerTimeouts, httpTimeoutOptions, markUnixSocketRequest } from "../api/index.js";
import type { DaemonConfig } from "../config/types.js";
import type { Logger } from "../shared/logger.js";

/** sun_path is 108 bytes on Linux; longer socket paths cannot be bound. */
const MAX_SOCKET_PATH = 107;

/**
 * `<data>/svcd.sock` (CONTRACT §1): the same API over HTTP/1.1 on a 0600 Unix
 * socket, its peers trusted as admin (the request is marked before routing).
 * Returns how to undo it, or null when the path is too long to bind (svc then
 * uses HTTP through api.addr).
 */
export async function startUnixSocket(
  app: FastifyInstance,
  dataDir: string,
  timeouts: DaemonConfig["api"]["timeouts"],
  log: Logger,
): Promise<(() => Promise<void>) | null> {
  const sock = join(dataDir, "svcd.sock");
  if (Buffer.byteLength(sock) > MAX_SOCKET_PATH) {
    log.warn({ path: sock }, "the Unix socket path is too long to bind (108 bytes max): svc will use HTTP through api.addr");
    return null;
  }
  rmSync(sock, { force: true }); // a stale socket: we hold the lock, so it is not another daemon's
  const unix: Server = createServer(httpTimeoutOptions(timeouts), (req, res) => {
    markUnixSocketRequest(req);
    app.routing(req, res);
  });
  applyServerTimeouts(unix, timeouts);
  unix.on("upgrade", (req, socket, head) => {
    markUnixSocketRequest(req);
    app.server.emit("upgrade", req, socket, head);
  });
  await new Promise<void>((resolve, reject) => {
    unix.once("error", reject);
    // umask so the socket is never briefly reachable by others before the chmod
    const old = process.umask(0o177);
    unix.listen(sock, () => {
      process.umask(old);
      resolve();
    });
  });
  chmodSync(sock, 0o600);
  return async () => {
    unix.closeAllConnections();
    await new Promise((r) => unix.close(() => r(undefined)));
    rmSync(sock, { force: true });
  };
}
