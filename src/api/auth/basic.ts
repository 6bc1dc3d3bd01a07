import type { BasicUser } from "../../config/types.js";
import type { BcryptWorker } from "./bcryptWorker.js";
import { digest } from "./secrets.js";
import type { FailureLimiter } from "./failureLimiter.js";

export type BasicResult =
  | { ok: true; user: BasicUser }
  | { ok: false; why: "wrong"; limitReached: boolean }
  | { ok: false; why: "throttled" | "busy"; retryAfterMs: number };

/**
 * A successful check is remembered (keyed by a SHA-256 of user and password,
 * never the password) for this long after its last use, and at most
 * CACHE_MAX_AGE_MS in all; a reload forgets every one.
 */
export const CACHE_TTL_MS = 60_000;
export const CACHE_MAX_AGE_MS = 15 * 60_000;
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
  private readonly cache = new Map<string, { expires: number; until: number; username: string }>();
  private readonly inflight = new Map<string, Promise<boolean>>();
  private dummy = `$2b$10$${DUMMY_TAIL}`;

  constructor(
    private readonly bcrypt: BcryptWorker,
    private readonly limiter: FailureLimiter,
    private readonly now: () => number = Date.now,
  ) {}

  setUsers(users: readonly BasicUser[]): void {
    this.users = new Map(users.map((u) => [u.username, u]));
    this.cache.clear();
    // A check under way is against the old hashes: no later request may share it (verify checks again).
    this.inflight.clear();
    this.limiter.clear();
    // The dummy hash of an unknown user costs as much as the dearest real one: with users of several
    // costs, the answer time must not tell a known name (bcrypt time grows 2x per cost step).
    const costs = users.map((u) => Number(/^\$2[aby]\$(\d\d)\$/.exec(u.passwordHash)?.[1] ?? 10));
    this.dummy = `$2b$${String(costs.length > 0 ? Math.max(...costs) : 10).padStart(2, "0")}$${DUMMY_TAIL}`;
  }

  async verify(username: string, password: string, client: string): Promise<BasicResult> {
    const key = cacheKey(username, password);
    const now = this.now();
    // A refused address is refused whatever it sends: letting remembered successes through would
    // let it test guesses against the cache at full speed.
    const wait = this.limiter.blockedFor(client, now);
    if (wait > 0) return { ok: false, why: "throttled", retryAfterMs: wait };
    const hit = this.cache.get(key);
    if (hit && hit.expires > now && hit.username === username) {
      const user = this.users.get(username);
      if (user) {
        hit.expires = Math.min(now + CACHE_TTL_MS, hit.until);
        return { ok: true, user };
      }
    }
    if (hit) this.cache.delete(key);
    if (this.bcrypt.inFlight >= MAX_IN_FLIGHT) return { ok: false, why: "busy", retryAfterMs: 1_000 };

    const users = this.users;
    const user = users.get(username);
    // The same credentials already being checked (a page loading several URLs at once): share that check.
    const running = this.inflight.get(key);
    if (running) {
      const ok = await running;
      // Users replaced meanwhile (a reload): that answer was about the old password.
      if (users !== this.users) return this.verify(username, password, client);
      return ok && user ? { ok: true, user } : { ok: false, why: "wrong", limitReached: false };
    }
    const check = this.bcrypt.compare(password, user?.passwordHash ?? this.dummy).then((ok) => ok && user !== undefined);
    this.inflight.set(key, check);
    this.limiter.begin(client, now);
    let ok: boolean;
    try {
      ok = await check;
    } catch (e) {
      this.limiter.end(client, false, this.now()); // not the client's failure: the checker broke (a 500)
      throw e;
    } finally {
      if (this.inflight.get(key) === check) this.inflight.delete(key);
    }
    if (users !== this.users) {
      // The users were replaced (a reload) while it ran: the answer is about the old hashes. Asked again.
      this.limiter.end(client, false, this.now());
      return this.verify(username, password, client);
    }
    const limitReached = this.limiter.end(client, !ok, this.now());
    if (!ok) return { ok: false, why: "wrong", limitReached };
    const t = this.now();
    if (this.cache.size >= CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { expires: t + CACHE_TTL_MS, until: t + CACHE_MAX_AGE_MS, username });
    return { ok: true, user: user! };
  }
}

function cacheKey(username: string, password: string): string {
  return digest(`${username.length}:${username}:${password}`).toString("hex");
}
