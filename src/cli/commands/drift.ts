/**
 * The warning `svc status` and `svc show` print when svc.yaml (or svcd.yaml)
 * changed on disk since the daemon loaded it, as systemctl warns that a unit
 * file changed and `daemon-reload` is needed. The daemon reports the SHA-256
 * of each file as it loaded it (GET /api/daemon/info); we hash the files now.
 * Only for a daemon of this machine (socket or api.addr): a remote daemon's
 * paths mean nothing here.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import type { DaemonClient } from "../client/http.js";
import { localTime } from "../client/present.js";
import type { DaemonInfo } from "../client/types.js";
import type { CliContext } from "../context.js";

export async function configDriftWarning(ctx: CliContext, client: DaemonClient): Promise<void> {
  const t = client.target;
  if (t.kind === "http" && t.source !== "api.addr") return;
  const info = await client.get<DaemonInfo>("/api/daemon/info");
  for (const w of driftWarnings(info)) ctx.output.err(`svc: warning: ${w}\n`);
}

/** One line per changed file (none when the daemon does not report digests). */
export function driftWarnings(info: DaemonInfo): string[] {
  const out: string[] = [];
  const when = info.config_loaded_at ? ` (loaded ${localTime(info.config_loaded_at)})` : "";
  if (info.config_sha256 && sha256(info.config_path) !== info.config_sha256) {
    out.push(`${basename(info.config_path)} changed on disk since the daemon loaded it${when}; run \`svc reload\` to apply it`);
  }
  const svcd = info.daemon_config_path;
  if (svcd && info.daemon_config_sha256 !== undefined && sha256(svcd) !== info.daemon_config_sha256) {
    out.push(
      `${basename(svcd)} changed on disk since the daemon loaded it${when}; \`svc reload\` applies log.level and auth, \`svc restart\` the rest`,
    );
  }
  return out;
}

function sha256(path: string): string | null {
  try {
    return createHash("sha256").update(readFileSync(path)).digest("hex");
  } catch {
    return null;
  }
}
