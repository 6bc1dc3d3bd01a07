import { dirname, join } from "node:path";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { mayCall } from "../auth/index.js";
import { daemonConfigView, PLACEHOLDER, projectConfigView, type ConfigFileKind } from "../configAccess.js";
import { RedactedTexts, type ConfigWorker } from "../configWorker.js";
import { readIfExists, serialized, writeAtomically } from "../configFiles.js";
import type { ApiDeps } from "../deps.js";
import { ApiError, conflict, invalidConfig } from "../errors.js";
import { principal } from "../principal.js";
import { configIssueSchema } from "../schemas.js";
import { rejectedReload } from "./daemon.js";

const tags = ["config"];

/** Under the 1 MiB body limit with room for the JSON around it. */
export const MAX_CONFIG_TEXT = 1_000_000;

const fileBody = {
  type: "object",
  required: ["content"],
  additionalProperties: false,
  properties: {
    file: { type: "string", enum: ["svc.yaml", "svcd.yaml"], default: "svc.yaml" },
    content: { type: "string", maxLength: MAX_CONFIG_TEXT, description: "the whole YAML text" },
  },
} as const;

const validation = {
  type: "object",
  required: ["valid", "errors", "warnings"],
  properties: {
    valid: { type: "boolean" },
    errors: { type: "array", items: configIssueSchema },
    warnings: { type: "array", items: configIssueSchema },
  },
} as const;

const pathAndText = {
  type: "object",
  required: ["path", "content"],
  properties: { path: { type: ["string", "null"] }, content: { type: ["string", "null"] } },
} as const;

type FileBody = { Body: { file: ConfigFileKind; content: string } };
type RawQuery = { Querystring: { raw?: "1" | "0" | "true" | "false" } };

const rawQuery = {
  type: "object",
  properties: {
    raw: {
      type: "string",
      enum: ["1", "0", "true", "false"],
      description: "1: the text as it is on disk, secrets included; only for a principal allowed POST /api/config/save (else 403)",
    },
  },
} as const;

/** Who asked, for the daemon log: the principal's name, else how it came in. */
function whoIs(request: FastifyRequest): string {
  const p = principal(request);
  if (p.name) return `${p.name} (role ${p.role})`;
  return p.transport === "unix" ? "a Unix socket peer (admin)" : "an unauthenticated caller (auth.type none)";
}

/**
 * Every parse of a whole config text a request asks for (redaction,
 * validation, the placeholder guard) runs in `worker`'s thread: a
 * 10,000-job svc.yaml takes seconds to redact, and the daemon's tick must
 * not wait on a config view. Only the reload after a save parses on the
 * loop (docs/PERFORMANCE.md says why).
 */
export function configRoutes(app: FastifyInstance, deps: ApiDeps, worker: ConfigWorker): void {
  const oneAtATime = serialized();
  /** GET /api/config's answer for the configs loaded now (see there). */
  let effective: { project: ReturnType<ApiDeps["project"]>; daemon: ReturnType<ApiDeps["daemonConfig"]>; json: string } | null = null;

  /** Where a save of `kind` goes; svcd.yaml beside svc.yaml when the daemon has none (CONTRACT §1). */
  const targetOf = (kind: ConfigFileKind): string =>
    kind === "svc.yaml" ? deps.paths.config : (deps.paths.daemonConfig ?? join(dirname(deps.paths.config), "svcd.yaml"));

  app.get(
    "/api/config",
    {
      schema: {
        summary: "Effective config: svc.yaml with defaults applied and svcd.yaml, secrets ***",
        tags,
        response: { 200: { type: "object", required: ["config", "daemon"], properties: { config: { type: "object" }, daemon: { type: "object" } } } },
      },
    },
    async (_request, reply) => {
      // The view is a function of the loaded configs alone, and a reload loads new objects: it is built and
      // serialized once per pair (10,000 jobs: ~6 MB of JSON, ~60 ms of the event loop each time; the dashboard
      // asks every minute for its time zones).
      const project = deps.project();
      const daemon = deps.daemonConfig();
      if (effective?.project !== project || effective.daemon !== daemon) {
        effective = { project, daemon, json: JSON.stringify({ config: projectConfigView(project), daemon: daemonConfigView(daemon) }) };
      }
      return reply.type("application/json; charset=utf-8").send(effective.json);
    },
  );

  const redacted = new RedactedTexts(worker);

  /**
   * A config file's text (CONTRACT §7.5): redacted for everyone; as on disk
   * with `?raw=1` for a principal that may save it, logged with who asked.
   * A file that cannot be parsed cannot be redacted, so it is not shown:
   * 422 `invalid_config` with its YAML errors.
   */
  const fileText = async (request: FastifyRequest<RawQuery>, kind: ConfigFileKind, path: string | null) => {
    const raw = request.query.raw === "1" || request.query.raw === "true";
    if (raw && !mayCall(request, "POST", "/api/config/save")) {
      throw new ApiError(
        "forbidden",
        `role "${principal(request).role}" may not read ${kind} with its secrets (?raw=1 needs the right to POST /api/config/save in auth.rbac); without ?raw=1 the secrets read ***`,
      );
    }
    const text = path === null ? null : await readIfExists(path);
    if (text === null) return { path, content: null };
    if (raw) {
      deps.log.info({ principal: whoIs(request), file: path }, `config text with secrets read through the API (?raw=1): ${path}, by ${whoIs(request)}`);
      return { path, content: text };
    }
    const r = await redacted.of(kind, text);
    if (r.ok) return { path, content: r.text };
    throw invalidConfig(
      `${path} cannot be parsed as YAML, so it cannot be shown with its secrets hidden (${r.errors.length} error${r.errors.length === 1 ? "" : "s"}): fix the file, or read it with ?raw=1 if your role may save the config`,
      r.errors.map((e) => ({ file: path, line: e.line, column: e.column, path: "", message: e.message })),
    );
  };

  app.get<RawQuery>(
    "/api/config/daemon",
    {
      schema: {
        summary: "svcd.yaml as written (path and text), line for line, secret values ***; ?raw=1 as on disk (save right needed); nulls without a file",
        tags,
        querystring: rawQuery,
        response: { 200: pathAndText },
      },
    },
    async (request) => fileText(request, "svcd.yaml", deps.paths.daemonConfig),
  );

  app.get<RawQuery>(
    "/api/config/source",
    {
      schema: {
        summary: "svc.yaml as written (additive, beyond CONTRACT §4), line for line, secret values ***; ?raw=1 as on disk (save right needed)",
        tags,
        querystring: rawQuery,
        response: { 200: pathAndText },
      },
    },
    async (request) => fileText(request, "svc.yaml", deps.paths.config),
  );

  app.post<FileBody>(
    "/api/config/validate",
    {
      schema: {
        summary: "Validate a config text without saving it (always 200; `valid` says)",
        tags,
        body: fileBody,
        response: { 200: validation },
      },
    },
    async (request) => worker.validate(request.body.file, request.body.content, targetOf(request.body.file)),
  );

  app.post<FileBody>(
    "/api/config/save",
    {
      schema: {
        summary: "Validate (cycles included), write atomically keeping `<file>.bak`, then reload; 422 when invalid",
        tags,
        body: fileBody,
        response: {
          200: {
            type: "object",
            required: ["saved", "path", "backup", "reloaded", "jobs"],
            properties: {
              saved: { type: "boolean" },
              path: { type: "string" },
              backup: { type: ["string", "null"] },
              reloaded: { type: "boolean" },
              jobs: { type: "integer" },
              warnings: { type: "array", items: configIssueSchema },
            },
          },
        },
      },
    },
    async (request) =>
      oneAtATime(async () => {
        const { file, content } = request.body;
        if (file === "svcd.yaml" && deps.paths.daemonConfig === null) {
          throw conflict(
            `the daemon was started without svcd.yaml; create ${targetOf(file)} and restart the daemon to use it`,
          );
        }
        const path = targetOf(file);
        const result = await worker.validate(file, content, path);
        if (!result.valid) {
          throw invalidConfig(`${file} is invalid (${result.errors.length} error${result.errors.length === 1 ? "" : "s"}): nothing was saved`, result.errors);
        }
        // Only a text holding the placeholder can write it over a secret: the others skip the
        // guard's two positioned parses (seconds at 10,000 jobs, in the worker).
        const placeholders = content.includes(PLACEHOLDER) ? await worker.placeholders(file, content, await readIfExists(path), path) : [];
        if (placeholders.length > 0) {
          throw invalidConfig(
            `${file} holds the redacted placeholder "***" where ${path} has a secret (${placeholders.length} value${placeholders.length === 1 ? "" : "s"}): nothing was saved`,
            placeholders,
          );
        }
        const backup = await writeAtomically(path, content);
        deps.log.info({ path, backup }, `config saved through the API: ${path}`);
        const reload = await deps.reload();
        if (!reload.ok) {
          const e = rejectedReload(reload.errors);
          throw invalidConfig(`${file} was saved (previous copy: ${backup ?? "none"}), but ${e.message}`, reload.errors);
        }
        return { saved: true, path, backup, reloaded: true, jobs: reload.jobs, warnings: result.warnings };
      }),
  );
}
