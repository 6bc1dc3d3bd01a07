import { randomUUID } from "node:crypto";
import { createReadStream, rmSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import type { FastifyInstance } from "fastify";
import type { ApiDeps } from "../deps.js";
import { badRequest } from "../errors.js";

/** The data directory's temporary copies for downloads (the daemon removes any left at startup). */
export const DOWNLOAD_PREFIX = "backup-download-";

const resultSchema = {
  type: "object",
  required: ["path", "bytes", "schema_version", "runs", "integrity", "started_at", "finished_at", "duration_ms"],
  properties: {
    path: { type: "string" },
    bytes: { type: "integer" },
    schema_version: { type: "integer" },
    runs: { type: "integer", description: "job_runs rows in the copy" },
    integrity: { type: "string", enum: ["ok"] },
    started_at: { type: "string" },
    finished_at: { type: "string" },
    duration_ms: { type: "integer" },
  },
} as const;

/**
 * `POST /api/db/backup` (CONTRACT §7.4; admin under the default RBAC):
 * an online backup while the daemon runs. With `{"path"}` the daemon writes
 * the copy there (an absolute path on its machine) and answers what it wrote;
 * without a body the copy is streamed back as the answer (for `svc backup`
 * against a remote daemon, or curl).
 */
export function backupRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.post<{ Body: { path?: string } | undefined }>(
    "/api/db/backup",
    {
      schema: {
        summary: "Online backup of the database: written to `path` on the daemon's machine, or streamed back without a body",
        tags: ["database"],
        body: {
          type: ["object", "null"],
          additionalProperties: false,
          properties: { path: { type: "string", minLength: 1, maxLength: 4096, description: "absolute path of the copy (replaced if it exists)" } },
        },
        response: {
          200: {
            description: "the backup's record, or (without a body) the database file itself as application/vnd.sqlite3",
            content: { "application/json": { schema: resultSchema }, "application/vnd.sqlite3": { schema: { type: "string", format: "binary" } } },
          },
        },
      },
    },
    async (request, reply) => {
      const path = request.body?.path;
      if (path !== undefined) {
        if (!isAbsolute(path)) throw badRequest(`path: "${path}" must be an absolute path on the daemon's machine`);
        if (path.includes("\0")) throw badRequest("path: a file path cannot hold a NUL character");
        return await backupOrExplain(deps, path);
      }
      // Its own name: two downloads in the same millisecond shared one file, and the first to be
      // sent removed the other's copy (a 500 found by the API fuzz on a loaded machine).
      const tmp = join(deps.paths.dataDir, `${DOWNLOAD_PREFIX}${process.pid}-${randomUUID()}.db`);
      let result;
      try {
        result = await backupOrExplain(deps, tmp, true);
      } catch (e) {
        rmSync(tmp, { force: true });
        throw e;
      }
      const stream = createReadStream(tmp);
      // The file is removed once sent (or when the client goes away); the open stream keeps reading it.
      stream.once("open", () => rmSync(tmp, { force: true }));
      stream.once("error", () => rmSync(tmp, { force: true }));
      const name = `svc-${result.started_at.replace(/[-:]/g, "").replace(/\.\d{3}Z$/, "Z")}.db`;
      return reply
        .type("application/vnd.sqlite3")
        .header("Content-Disposition", `attachment; filename="${name}"`)
        .header("Content-Length", String(result.bytes))
        .header("X-Svc-Schema-Version", String(result.schema_version))
        .header("X-Svc-Runs", String(result.runs))
        .send(stream);
    },
  );
}

/** The backup, with a file-system refusal (no such directory, no permission) as a 400 that says where. */
async function backupOrExplain(deps: ApiDeps, path: string, download = false) {
  try {
    const result = await deps.store.backup(path);
    deps.log.info({ path: result.path, bytes: result.bytes, runs: result.runs, ms: result.duration_ms }, `database backed up to ${result.path}`);
    return result;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) {
      if (download) throw e; // the daemon's own temporary copy: not the client's to fix (a 500, logged)
      const fix =
        code === "EISDIR"
          ? "it is a directory: give the path of a file in it"
          : code === "ENOSPC" || code === "EDQUOT"
            ? "its file system is full: free space or give another path"
            : "check that its directory exists and the daemon's user may write there";
      throw badRequest(`cannot write the backup to ${path} (${code}): ${fix}`);
    }
    throw e;
  }
}
