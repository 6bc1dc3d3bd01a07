import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { LoadedConfig } from "../api/deps.js";

export type { LoadedConfig };

/**
 * What the daemon loaded, for `svc status`'s "changed on disk" warning (as
 * systemctl warns when a unit file changed since daemon-reload). The digest
 * is taken just before the file is parsed, so an edit racing the load can
 * only cause a needless warning, never hide a change.
 */
export function fileDigest(path: string | null): string | null {
  if (path === null) return null;
  try {
    return createHash("sha256").update(readFileSync(path)).digest("hex");
  } catch {
    return null;
  }
}

/** Both files' digests, taken now (`at`). */
export function digestConfigs(svc: string, svcd: string | null, at: number): LoadedConfig {
  return { at, svcSha256: fileDigest(svc), svcdSha256: fileDigest(svcd) };
}
