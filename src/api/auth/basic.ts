import type { BasicUser } from "../../config/types.js";
import type { BcryptWorker } from "./bcryptWorker.js";
import { digest } from "./secrets.js";
import type { FailureLimiter } from "./failureLimiter.js";

export type BasicResult =
  | { ok: true; user: BasicUser }
  | { ok: false; why: "wrong"; limitReached: boolean }
  | { ok: false; why: "throttled" | "busy"; retryAfterMs: number };

/** A successful check is remembered this long (keyed by a SHA-256 of user and password, never the password). */
export const CACHE_TTL_MS = 60_000;
const CACHE_MAX = 1_000;
/** More comparisons than this waiting for the worker: refuse new ones at once. */
export const MAX_IN_FLIGHT = 32;

/** 53 characters of salt and hash that match no password; the cost digits are set per check. */
const DUMMY_TAIL = "Ro0CUfOqk6cXEKf3dyaM7OhSCvnwM9s4wIX9JeLapehKK5YdLxKcm";

/**
 * HTTP Basic against `auth.basic.users` (bcrypt hashes only). Comparisons
 * run in the bcrypt worker; an unknown user is compared against a dummy
 * hash of the same cost, so the answer time does not tell whether a user
 * exists. Failures count against the client address (FailureLimiter).
 */
export class BasicVerifier {
  private users = new Map<string, BasicUser>();
  private readonly cache = new Map<string, { expires: number; username: string }>();
  private dummy = `$2b$10$${DUMMY_TAIL}`;

  constructor(
    private readonly bcrypt: BcryptWorker,
    private readonly limiter: FailureLimiter,
    private readonly now: () => number = Date.now,
  ) {}

  setUsers(users: readonly BasicUser[]): void {
    this.users = new Map(users.map((u) => [u.username, u]));
    this.cache.clear();
    this.limiter.clear();
    const cost = users[0] ? /^\$2[aby]\$(\d\d)\$/.exec(users[0].passwordHash)?.[1] : undefined;
    this.dummy = `$2b$${cost ?? "10"}$${DUMMY_TAIL}`;
  }

  async verify(username: string, password: string, client: string): Promise<BasicResult> {
    const key = cacheKey(username, password);
    const now = this.now();
    const hit = this.cache.get(key);
    if (hit && hit.expires > now && hit.username === username) {
      const user = this.users.get(username);
      if (user) return { ok: true, user };
    }
    if (hit) this.cache.delete(key);

    const wait = this.limiter.blockedFor(client, now);
    if (wait > 0) return { ok: false, why: "throttled", retryAfterMs: wait };
    if (this.bcrypt.inFlight >= MAX_IN_FLIGHT) return { ok: false, why: "busy", retryAfterMs: 1_000 };

    const user = this.users.get(username);
    const ok = await this.bcrypt.compare(password, user?.passwordHash ?? this.dummy);
    if (ok && user) {
      if (this.cache.size >= CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(key, { expires: this.now() + CACHE_TTL_MS, username });
      return { ok: true, user };
    }
    const limitReached = this.limiter.fail(client, this.now());
    return { ok: false, why: "wrong", limitReached };
  }
}

function cacheKey(username: string, password: string): string {
  return digest(`${username.length}:${username}:${password}`).toString("hex");
}
