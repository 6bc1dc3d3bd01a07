/**
 * Where the daemon is (CONTRACT §1 "client transport"):
 *
 * 1. `--addr URL` or `SVC_ADDR`: HTTP(S) to that address.
 * 2. else `<data>/svcd.sock` when it exists: HTTP/1.1 over the Unix socket
 *    (trusted as admin by file permissions, so no token is sent).
 * 3. else `<data>/api.addr` when it exists: HTTP(S) to the `host:port` in it.
 * 4. else there is no daemon for this project.
 *
 * HTTP(S) targets send `SVC_TOKEN` as `Authorization: Bearer`. HTTPS is used
 * when the URL says so, or (for api.addr) when `SVC_CACERT` or
 * `SVC_CLIENT_CERT` is set, since api.addr holds no scheme.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigNotFoundError, dataDir as dataDirOf, findConfig } from "../../config/discover.js";
import type { CliContext, GlobalOptions } from "../context.js";
import { CliError, UsageError } from "../output.js";

export interface TlsFiles {
  ca: string | null;
  cert: string | null;
  key: string | null;
}

interface Common {
  /** svc.yaml, when known (always, except with --addr/SVC_ADDR and no svc.yaml around). */
  projectFile: string | null;
  dataDir: string | null;
}

export interface UnixTarget extends Common {
  kind: "unix";
  socketPath: string;
}

export interface HttpTarget extends Common {
  kind: "http";
  /** Base URL, always ending in `/` (a base path is kept: `https://host/svc/`). */
  url: URL;
  /** Where the address came from, for messages. */
  source: "--addr" | "SVC_ADDR" | "api.addr";
  token: string | null;
  tls: TlsFiles;
}

export type Target = UnixTarget | HttpTarget;

/** The options that choose the transport, as seen by every client command. */
export interface ClientGlobals extends GlobalOptions {
  addr?: string;
}

/** `no daemon for /path/svc.yaml: start it with \`svc start\`` (exit 1). */
export class NoDaemonError extends CliError {
  constructor(
    readonly projectFile: string | null,
    detail = "",
  ) {
    super(`no daemon for ${projectFile ?? "this project"}: start it with \`svc start\`${detail}`);
  }
}

export interface ProjectPaths {
  projectFile: string;
  dataDir: string;
}

/** svc.yaml and the data directory, as the daemon would find them. */
export function projectPaths(ctx: CliContext, globals: GlobalOptions): ProjectPaths {
  let projectFile: string;
  try {
    projectFile = findConfig({ flag: globals.config, env: ctx.env, cwd: ctx.cwd });
  } catch (e) {
    if (e instanceof ConfigNotFoundError) throw new CliError(e.message);
    throw e;
  }
  return { projectFile, dataDir: dataDirOf({ configFile: projectFile, flag: globals.dataDir, env: ctx.env, cwd: ctx.cwd }) };
}

export function resolveTarget(ctx: CliContext, globals: ClientGlobals): Target {
  const tls = tlsFiles(ctx.env);
  const token = nonEmpty(ctx.env.SVC_TOKEN);
  const explicit = nonEmpty(globals.addr) ?? nonEmpty(ctx.env.SVC_ADDR);
  if (explicit !== null) {
    const source = nonEmpty(globals.addr) !== null ? "--addr" : "SVC_ADDR";
    const paths = optionalPaths(ctx, globals);
    return { kind: "http", url: parseAddr(explicit, source, tls), source, token, tls, ...paths };
  }
  const { projectFile, dataDir } = projectPaths(ctx, globals);
  const socketPath = join(dataDir, "svcd.sock");
  if (existsSync(socketPath)) return { kind: "unix", socketPath, projectFile, dataDir };
  const addr = readAddrFile(dataDir);
  if (addr !== null) {
    return { kind: "http", url: parseAddr(addr, "api.addr", tls), source: "api.addr", token, tls, projectFile, dataDir };
  }
  throw new NoDaemonError(projectFile);
}

/** `<data>/api.addr` (one `host:port` line), or null when absent or empty. */
export function readAddrFile(dataDir: string): string | null {
  try {
    return nonEmpty(readFileSync(join(dataDir, "api.addr"), "utf8").trim());
  } catch {
    return null;
  }
}

/**
 * `host:port`, `http://host:port[/base]` or `https://...` as a base URL
 * ending in `/`. A bare address is https when TLS client files are set.
 */
export function parseAddr(text: string, source: string, tls: TlsFiles = { ca: null, cert: null, key: null }): URL {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `${tls.ca || tls.cert ? "https" : "http"}://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new UsageError(`${source}: "${shownText(text)}" is not an address; use host:port or http(s)://host:port[/base_path]`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`${source}: "${shownText(text)}" must be an http:// or https:// address`);
  }
  url.search = "";
  url.hash = "";
  if (!url.pathname.endsWith("/")) url.pathname += "/";
  return url;
}

function tlsFiles(env: NodeJS.ProcessEnv): TlsFiles {
  return { ca: nonEmpty(env.SVC_CACERT), cert: nonEmpty(env.SVC_CLIENT_CERT), key: nonEmpty(env.SVC_CLIENT_KEY) };
}

/** With --addr the project is optional: it only names the daemon in messages. */
function optionalPaths(ctx: CliContext, globals: GlobalOptions): Common {
  try {
    const p = projectPaths(ctx, globals);
    return { projectFile: p.projectFile, dataDir: p.dataDir };
  } catch {
    return { projectFile: null, dataDir: null };
  }
}

function nonEmpty(s: string | undefined | null): string | null {
  return s === undefined || s === null || s.trim() === "" ? null : s.trim();
}

/** How a target reads in messages: the socket path or the URL (without a user and password in it). */
export function describeTarget(t: Target): string {
  return t.kind === "unix" ? t.socketPath : shownUrl(t.url);
}

/** The URL as shown to people: a user name and password in it (sent as Basic auth) are left out. */
export function shownUrl(url: URL): string {
  if (url.username === "" && url.password === "") return url.href;
  const shown = new URL(url.href);
  shown.username = "";
  shown.password = "";
  return shown.href;
}

/** An address as written, for messages about it: `user:password@` left out. */
function shownText(text: string): string {
  return text.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/@\s]*@/i, "$1");
}
