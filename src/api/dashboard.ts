import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import type { ApiDeps } from "./deps.js";

/**
 * `GET /` serves the dashboard build (dist/web/index.html) and
 * `GET /assets/*` its hashed files; without a build, `GET /` answers a small
 * page that says so. The page's URLs are relative (Vite `base: "./"`), so the
 * same build works under `api.base_path`.
 */
export async function dashboardRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const index = join(deps.paths.webRoot, "index.html");
  app.get(
    "/",
    {
      schema: {
        summary: "The dashboard (single-page app), or a page saying it is not built",
        tags: ["dashboard"],
        response: { 200: { description: "HTML", content: { "text/html": { schema: { type: "string" } } } } },
      },
    },
    async (_request, reply) => {
      // Read per request: a rebuilt dashboard shows up without a daemon restart.
      const html = await readFile(index, "utf8").catch(() => null);
      reply.type("text/html; charset=utf-8").header("Cache-Control", "no-cache");
      return html ?? notBuiltPage(deps.version);
    },
  );

  const assets = join(deps.paths.webRoot, "assets");
  if (existsSync(assets)) {
    // Loaded only when there are assets to serve (~40 ms of module loading).
    const { default: fastifyStatic } = await import("@fastify/static");
    await app.register(fastifyStatic, {
      root: assets,
      prefix: "/assets/",
      decorateReply: false,
      index: false,
      // File names carry a content hash: they never change.
      maxAge: "365d",
      immutable: true,
      schemaHide: false,
      // Escapes (`..`, encoded or not) are simply not found, like any other missing file.
      allowedPath: (pathName) => !decodeURIComponentSafe(pathName).split(/[\\/]/).includes(".."),
    });
  }
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function notBuiltPage(version: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>svc ${version}</title></head>
<body>
<h1>svc daemon ${version}</h1>
<p>The dashboard is not built. Build it with <code>npm run build:web</code> (it goes to <code>dist/web</code>).</p>
<p>The API answers meanwhile: <a href="api/status">api/status</a>, <a href="api/jobs">api/jobs</a>, <a href="api/openapi.json">api/openapi.json</a>.</p>
</body>
</html>
`;
}
