import { accessSync, constants, statSync } from "node:fs";
import type { DaemonConfig } from "../config/types.js";

/**
 * Settings the parser accepts but the daemon cannot start with (SPEC
 * "Errors"): one clear line, or null when startup may go on.
 */
export function startupProblem(cfg: DaemonConfig): string | null {
  if (cfg.auth.type === "oidc") {
    return (
      "auth.type: oidc is not supported yet (planned fields: auth.oidc.issuer, client_id, audience, jwks_uri, role_claim, default_role); " +
      "use auth.type bearer or basic"
    );
  }
  if (cfg.storage.engine === "postgres") {
    return "storage.engine: postgres is not supported yet; remove storage.engine (SQLite is the default)";
  }
  if (cfg.api.tls.enabled) {
    for (const [key, path] of [
      ["api.tls.cert", cfg.api.tls.cert],
      ["api.tls.key", cfg.api.tls.key],
      ["api.tls.client_ca", cfg.api.tls.clientCa],
    ] as const) {
      if (key === "api.tls.client_ca" && path === null) continue;
      const problem = unreadable(path);
      if (problem) return `${key}: ${problem}; TLS is enabled, so the daemon cannot start`;
    }
  }
  return null;
}

function unreadable(path: string | null): string | null {
  if (!path) return "no file is set";
  try {
    if (!statSync(path).isFile()) return `${path} is not a file`;
    accessSync(path, constants.R_OK);
    return null;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? `${path} does not exist` : `${path} is not readable (${code ?? "error"})`;
  }
}
