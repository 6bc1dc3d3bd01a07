import type { IncomingHttpHeaders } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { DaemonConfig } from "../../config/types.js";
import type { Logger } from "../../shared/logger.js";
import type { Principal } from "../principal.js";
import { BasicVerifier } from "./basic.js";
import { BcryptWorker } from "./bcryptWorker.js";
import { presentedCredentials, type Presented } from "./credentials.js";
import { FailureLimiter, type LimiterOptions, DEFAULT_LIMITS } from "./failureLimiter.js";
import { compileRbac, roleAllows, type CompiledRbac } from "./rbac.js";
import { digest, sameDigest, tokenLabel } from "./secrets.js";
import { readTokenFile } from "./tokenFile.js";

export type AuthConfig = DaemonConfig["auth"];

export interface AuthRequest {
  headers: IncomingHttpHeaders;
  /** A WebSocket upgrade (the `bearer.<token>` subprotocol counts). */
  isUpgrade: boolean;
  /** The client address, for the failure limit and logs. */
  client: string;
}

export type AuthResult =
  | { ok: true; principal: Principal }
  /** `challenge` is the WWW-Authenticate value; `message` never quotes a credential. */
  | { ok: false; challenge: string; message: string; retryAfterS?: number };

interface TokenEntry {
  digest: Buffer;
  role: string;
  label: string;
}

interface Snapshot {
  type: AuthConfig["type"];
  tokens: TokenEntry[];
  rbac: CompiledRbac;
}

const REALM = 'realm="svc"';
/** How long a refusal without a password check (a refused address, a full checker) is held. */
export const REFUSAL_DELAY_MS = 100;

/**
 * Who a TCP request is (SPEC "Authentication", CONTRACT §5) and what its
 * role may do. `configure` swaps the whole state at once, so a request sees
 * either the old settings or the new ones; when the new ones cannot be used
 * (a missing or empty token file) it returns the error and keeps the old.
 */
export class Authenticator {
  private state: Snapshot = { type: "none", tokens: [], rbac: compileRbac({}) };
  private readonly bcrypt = new BcryptWorker();
  private readonly basic: BasicVerifier;

  constructor(
    private readonly log: Logger,
    limits: LimiterOptions = DEFAULT_LIMITS,
  ) {
    this.basic = new BasicVerifier(this.bcrypt, new FailureLimiter(limits));
  }

  get type(): AuthConfig["type"] {
    return this.state.type;
  }

  configure(cfg: AuthConfig): { ok: true } | { ok: false; error: string } {
    const next = this.prepare(cfg);
    if (!next.ok) return next;
    next.apply();
    return { ok: true };
  }

  /**
   * Reads and checks `cfg` (the token file, auth.rbac) without applying it: a reload checks it
   * with the rest of the config, and applies it only if all of it is usable.
   */
  prepare(cfg: AuthConfig): { ok: true; apply(): void } | { ok: false; error: string } {
    const warnings: string[] = [];
    const tokens: TokenEntry[] = [];
    const roles: { who: string; role: string; quoted: boolean }[] = [];
    if (cfg.type === "bearer") {
      if (cfg.bearer.tokenFile !== null) {
        const file = readTokenFile(cfg.bearer.tokenFile);
        if (!file.ok) return { ok: false, error: file.error };
        warnings.push(...file.warnings);
        for (const t of file.tokens) {
          const label = tokenLabel(t.token);
          tokens.push({ digest: digest(t.token), role: t.role, label });
          // Its role is not quoted: a line written the wrong way round has the token there.
          roles.push({ who: `${label} (${cfg.bearer.tokenFile}:${t.line})`, role: t.role, quoted: false });
        }
      }
      // The inline token (role admin): the config loader warns that the file form is preferred.
      if (cfg.bearer.token !== null) {
        tokens.push({ digest: digest(cfg.bearer.token), role: "admin", label: tokenLabel(cfg.bearer.token) });
      }
      if (tokens.length === 0) return { ok: false, error: "auth.type bearer: no token is configured (auth.bearer.token_file or auth.bearer.token)" };
    }
    const rbac = compileRbac(cfg.rbac);
    warnings.push(...rbac.warnings);
    if (cfg.type === "basic") for (const u of cfg.basic.users) roles.push({ who: `user ${u.username}`, role: u.role, quoted: true });
    for (const { who, role, quoted } of roles) {
      if (rbac.roles.has(role)) continue;
      warnings.push(
        quoted
          ? `${who} has role "${role}", which auth.rbac does not define: it gets 403 on every route`
          : `${who} has a role that auth.rbac does not define: it gets 403 on every route (a line is "<token> <role>", the token first)`,
      );
    }
    return {
      ok: true,
      apply: () => {
        if (cfg.type === "basic") this.basic.setUsers(cfg.basic.users);
        this.state = { type: cfg.type, tokens, rbac };
        for (const w of warnings) this.log.warn(w);
      },
    };
  }

  /** The principal of a request, or why it is refused. Only for `bearer` and `basic`. */
  async authenticate(req: AuthRequest): Promise<AuthResult> {
    const state = this.state;
    const presented = presentedCredentials(req.headers, req.isUpgrade && state.type === "bearer");
    if (state.type === "bearer") return this.bearer(state, presented, req);
    if (state.type === "basic") return this.basicAuth(presented, req);
    return { ok: false, challenge: `Bearer ${REALM}`, message: `auth.type ${state.type} is not supported` };
  }

  /** Whether `role` may call `method` on the path `segments` (auth.rbac). */
  allows(role: string, method: string, segments: readonly string[]): boolean {
    return roleAllows(this.state.rbac, role, method, segments);
  }

  hasRole(role: string): boolean {
    return this.state.rbac.roles.has(role);
  }

  close(): Promise<void> {
    return this.bcrypt.close();
  }

  private bearer(state: Snapshot, p: Presented, req: AuthRequest): AuthResult {
    const challenge = `Bearer ${REALM}`;
    if (p.kind === "none") return { ok: false, challenge, message: "authentication required: send Authorization: Bearer <token>" };
    if (p.kind === "malformed") return { ok: false, challenge: `${challenge}, error="invalid_request"`, message: `malformed credentials: ${p.why}` };
    if (p.kind !== "bearer") {
      // The scheme is not quoted unless known: a token sent without "Bearer " would be echoed.
      const what = p.kind === "basic" ? "not Basic credentials" : 'the Authorization header does not start with "Bearer "';
      return { ok: false, challenge, message: `this daemon takes bearer tokens (auth.type bearer): ${what}` };
    }
    const given = digest(p.token);
    // Every token is compared, whichever matches: the time does not depend on which one (or none) did.
    let found: TokenEntry | null = null;
    for (const t of state.tokens) if (sameDigest(t.digest, given) && found === null) found = t;
    if (!found) {
      this.log.debug({ client: req.client }, "authentication failed: unknown bearer token");
      return { ok: false, challenge: `${challenge}, error="invalid_token"`, message: "invalid bearer token" };
    }
    return { ok: true, principal: { name: found.label, role: found.role, transport: "tcp" } };
  }

  private async basicAuth(p: Presented, req: AuthRequest): Promise<AuthResult> {
    const challenge = `Basic ${REALM}, charset="UTF-8"`;
    if (p.kind === "none") return { ok: false, challenge, message: "authentication required: send HTTP Basic credentials" };
    if (p.kind === "malformed") return { ok: false, challenge, message: `malformed credentials: ${p.why}` };
    if (p.kind !== "basic") {
      const what = p.kind === "bearer" ? "not a bearer token" : 'the Authorization header does not start with "Basic "';
      return { ok: false, challenge, message: `this daemon takes HTTP Basic credentials (auth.type basic): ${what}` };
    }
    const r = await this.basic.verify(p.username, p.password, req.client);
    if (r.ok) return { ok: true, principal: { name: r.user.username, role: r.user.role, transport: "tcp" } };
    if (r.why === "wrong") {
      if (r.limitReached) {
        this.log.warn({ client: req.client }, `too many failed sign-ins from ${req.client}: its password checks are refused for a while`);
      } else {
        this.log.debug({ client: req.client }, "authentication failed: wrong username or password");
      }
      return { ok: false, challenge, message: "invalid username or password" };
    }
    // Refusals without a check are held a moment: a loop of guesses then costs the daemon
    // (and the machine) a few requests a second instead of as many as the attacker can send.
    await sleep(REFUSAL_DELAY_MS);
    const retryAfterS = Math.max(1, Math.ceil(r.retryAfterMs / 1000));
    const message =
      r.why === "throttled"
        ? `too many failed sign-ins from ${req.client}: try again in ${retryAfterS} s`
        : "too many sign-ins are being checked right now: try again in a moment";
    return { ok: false, challenge, message, retryAfterS };
  }
}
