import { renameSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { Authenticator, buildApi, exposureWarning, preloadValidation, type ApiDeps } from "../api/index.js";
import type { DaemonConfig } from "../config/types.js";
import type { Logger } from "../shared/logger.js";
import { toError } from "../shared/toError.js";
import { startGroup, type Undo } from "./parts.js";
import { StartupError } from "./startupError.js";
import { startUnixSocket } from "./unixSocket.js";

/**
 * Authentication (`auth.*`), started before the database opens so that a
 * missing or empty token file refuses startup at once (on reload the old
 * tokens stay: the daemon reconfigures this same Authenticator).
 */
export async function startAuth(cfg: DaemonConfig["auth"], log: Logger): Promise<{ auth: Authenticator; undo: Undo }> {
  const auth = new Authenticator(log);
  const ready = auth.configure(cfg);
  if (!ready.ok) {
    await auth.close();
    throw new StartupError([ready.error]);
  }
  return { auth, undo: () => auth.close() };
}

export interface ApiServer {
  app: FastifyInstance;
  /** host:port as bound (`[::1]:8080` for IPv6), what api.addr says. */
  address: string;
  undo: () => Promise<void>;
}

/**
 * The API on TCP (`api.addr`), then the same API on `<data>/svcd.sock`, then
 * `<data>/api.addr`: the file clients (and `svc start`) read as "ready", so
 * whoever finds api.addr also finds the socket. Undone in the reverse order.
 */
export function startApi(deps: ApiDeps, auth: Authenticator): Promise<ApiServer> {
  const { log, paths } = deps;
  const cfg = deps.daemonConfig();
  return startGroup(() => log, async (parts) => {
    const app = await buildApi(deps, { auth });
    parts.add("api", () => app.close());
    const [host, port] = splitAddr(cfg.api.addr);
    try {
      await app.listen({ host, port });
    } catch (e) {
      throw listenError(e, cfg.api.addr);
    }
    const addr = app.server.address() as AddressInfo;
    const address = `${addr.family === "IPv6" ? `[${addr.address}]` : addr.address}:${addr.port}`;
    const exposed = exposureWarning(addr.address, address, cfg);
    if (exposed) log.warn({ address }, exposed);

    parts.add("unix socket", await startUnixSocket(app, paths.dataDir, cfg.api.timeouts, log));

    const addrFile = join(paths.dataDir, "api.addr");
    writeFileSync(`${addrFile}.tmp`, `${address}\n`, { mode: 0o600 });
    renameSync(`${addrFile}.tmp`, addrFile);
    parts.add("api.addr", () => rmSync(addrFile, { force: true }));

    // Loaded lazily for a fast first answer, but before anyone needs it (a request at fd exhaustion).
    const preload = setImmediate(() => {
      try {
        preloadValidation();
      } catch (e) {
        log.warn({ err: toError(e) }, "could not load the request validator yet (it loads at the first request)");
      }
    });
    parts.add("validator preload", () => clearImmediate(preload));
    return { app, address };
  });
}

/** A bind failure says which setting to change. */
function listenError(e: unknown, addr: string | null): Error {
  const code = (e as NodeJS.ErrnoException).code;
  const where = addr ? `api.addr ${addr} (svcd.yaml)` : "the API address";
  if (code === "EADDRINUSE") return new StartupError([`${where}: the address is already in use (another svcd or another program listens there): stop it or set another port in api.addr`]);
  if (code === "EADDRNOTAVAIL") return new StartupError([`${where}: no interface of this machine has that address: set api.addr to one of its addresses (127.0.0.1 by default)`]);
  if (code === "EACCES") return new StartupError([`${where}: not allowed to listen there (ports below 1024 need privileges): set a port of 1024 or more in api.addr`]);
  return toError(e);
}

function splitAddr(addr: string | null): [string, number] {
  if (!addr) return ["127.0.0.1", 0];
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(addr);
  if (!m) return [addr, 0];
  return [m[1] || "127.0.0.1", Number(m[2])];
}
