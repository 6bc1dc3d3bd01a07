import { dirname, join } from "node:path";
import type { FastifyInstance } from "fastify";
import { daemonConfigView, projectConfigView, redactedDaemonText, validateConfigText, type ConfigFileKind } from "../configAccess.js";
import { readIfExists, serialized, writeAtomically } from "../configFiles.js";
import type { ApiDeps } from "../deps.js";
import { conflict, invalidConfig } from "../errors.js";
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

export function configRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const oneAtATime = serialized();

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
    async () => ({ config: projectConfigView(deps.project()), daemon: daemonConfigView(deps.daemonConfig()) }),
  );

  app.get(
    "/api/config/daemon",
    {
      schema: {
        summary: "svcd.yaml as written (path and text), secret values ***; nulls without a file",
        tags,
        response: { 200: pathAndText },
      },
    },
    async () => {
      const path = deps.paths.daemonConfig;
      const text = path === null ? null : await readIfExists(path);
      return { path, content: text === null ? null : redactedDaemonText(text) };
    },
  );

  app.get(
    "/api/config/source",
    {
      schema: {
        summary: "svc.yaml as written (additive, beyond CONTRACT §4): `${env:}` references stay unresolved",
        tags,
        response: { 200: pathAndText },
      },
    },
    async () => ({ path: deps.paths.config, content: await readIfExists(deps.paths.config) }),
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
    async (request) => validateConfigText(request.body.file, request.body.content, targetOf(request.body.file)),
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
        const result = validateConfigText(file, content, path);
        if (!result.valid) {
          throw invalidConfig(`${file} is invalid (${result.errors.length} error${result.errors.length === 1 ? "" : "s"}): nothing was saved`, result.errors);
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
