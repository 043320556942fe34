// A console's log-in session (the operator's on the admin listener, a dex administrator's on dex): a random
// 256-bit token in an HttpOnly, SameSite=Strict cookie, kept server-side as its SHA-256 with an expiry (a
// stolen table holds nothing usable). Cookies ride along on every request, so a change asked for with a
// cookie must also come from the console's own origin: SameSite=Strict already keeps other sites' requests
// cookieless, and the Origin check holds where SameSite is not honoured.
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ApiError } from './errors';
import type { Client } from './routing/request';

/** Where the sessions live (ConsoleSessionRepository of @pds/db). */
export interface SessionStore {
  create(tokenHash: string, actor: string, createdAt: Date, expiresAt: Date): Promise<void>;
  find(tokenHash: string, now: Date): Promise<{ actor: string; expiresAt: Date } | null>;
  remove(tokenHash: string): Promise<void>;
  removeExpired(now: Date): Promise<number>;
}

/** How long a console log-in lasts: a working day, then the person logs in again. */
export const CONSOLE_SESSION_TTL_MS = 12 * 3600 * 1000;

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** The value of cookie `name` in the request, if it carries one. */
export function cookieValue(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export class ConsoleSessions {
  constructor(
    private readonly store: SessionStore,
    /** The cookie's name, which also names the console (`pds_operator`, `pds_dex_admin`). */
    readonly cookie: string,
    private readonly clock: () => Date,
    private readonly ttlMs = CONSOLE_SESSION_TTL_MS,
  ) {}

  /** A new session for `actor`: the Set-Cookie value that carries it, and when it ends. */
  async start(actor: string, client: Client): Promise<{ setCookie: string; expiresAt: Date }> {
    const now = this.clock();
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(now.getTime() + this.ttlMs);
    // Ended sessions are few (one per log-in): each log-in clears those that have run out.
    await this.store.removeExpired(now);
    await this.store.create(hashOf(token), actor, now, expiresAt);
    return { setCookie: this.serialise(token, Math.floor(this.ttlMs / 1000), client), expiresAt };
  }

  /**
   * The session the request's cookie names, while it lasts; null without one. A change (POST, PUT,
   * DELETE) made with a cookie from another origin is refused (403) before anything is looked up.
   */
  async current(req: IncomingMessage, client: Client): Promise<{ actor: string; expiresAt: Date } | null> {
    const token = cookieValue(req, this.cookie);
    if (!token) return null;
    if (UNSAFE.has(req.method ?? '') && !sameOrigin(req, client))
      throw ApiError.forbidden('A console change must come from the console itself (its Origin)');
    return this.store.find(hashOf(token), this.clock());
  }

  /** Ends the request's session (if any): the Set-Cookie value that clears the cookie. */
  async end(req: IncomingMessage, client: Client): Promise<string> {
    const token = cookieValue(req, this.cookie);
    if (token) await this.store.remove(hashOf(token));
    return this.serialise('', 0, client);
  }

  private serialise(token: string, maxAgeSeconds: number, client: Client): string {
    // Secure where the console is reached over TLS (directly or through a trusted proxy); plain HTTP on a
    // private admin network would otherwise never get its cookie back.
    const secure = client.protocol === 'https' ? '; Secure' : '';
    return `${this.cookie}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`;
  }
}

/** Whether the request's Origin is the address it was sent to (a browser always sends Origin on a change). */
function sameOrigin(req: IncomingMessage, client: Client): boolean {
  const origin = req.headers.origin;
  return origin !== undefined && origin === `${client.protocol}://${client.host}`;
}
