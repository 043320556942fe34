// CORS as the original system answered it before it dropped it: hat-js runs inside web apps on other
// origins. Exact origins only (never "*", since responses allow credentials), X-Auth-Token allowed
// and exposed (a browser could not see the sliding session's fresh token otherwise), preflight
// cached for 3 days. Framework-free: the request pipeline applies it to every declared route, and the
// express fallback answers preflights with it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LRUCache } from 'lru-cache';
import { TUS_REQUEST_HEADERS, TUS_RESPONSE_HEADERS } from './files/tus/protocol';
import type { ResolvedInstance } from './instances/registry';

/** How long an instance's app origins are reused: a newly pushed app's origin works within this. */
export const APP_ORIGINS_TTL_MS = 10_000;
export const CORS_MAX_AGE_SECONDS = 3 * 24 * 3600;
export const CORS_ALLOWED_HEADERS = [
  'Content-Type',
  'X-Auth-Token',
  'X-Request-Id',
  'username',
  'password',
  'pass',
  'X-Totp',
  'x-amz-server-side-encryption',
  // Resumable uploads (tus) from a web app on another origin: what tus-js-client and Uppy send, and read.
  ...TUS_REQUEST_HEADERS,
];
const EXPOSED = ['X-Auth-Token', 'X-Request-Id', ...TUS_RESPONSE_HEADERS].join(',');
const METHODS = 'GET,POST,PUT,DELETE,PATCH,HEAD';

export class Cors {
  private readonly appOrigins: LRUCache<string, string[]>;

  /**
   * `configured` (CORS_ALLOWED_ORIGINS) when set, else the instance's own apps' origins. The lookup runs
   * only for requests that carry an Origin, so same-origin and server-to-server calls pay nothing, and
   * its answer is kept briefly, so a browser app's many calls do not each read the apps.
   */
  constructor(
    private readonly configured: string[] | undefined,
    origins: (instanceId: string) => Promise<string[]>,
  ) {
    this.appOrigins = new LRUCache({ max: 10_000, ttl: APP_ORIGINS_TTL_MS, fetchMethod: (instanceId) => origins(instanceId) });
  }

  /** Sets the CORS headers of an actual request from an allowed origin; nothing for others. */
  async apply(req: IncomingMessage, res: ServerResponse, tenant: ResolvedInstance): Promise<void> {
    const origin = await this.allowedOrigin(req, tenant);
    if (!origin) return;
    this.allow(res, origin);
    res.setHeader('Access-Control-Expose-Headers', EXPOSED);
  }

  /** Answers a preflight from an allowed origin (204); false when the origin is not allowed. */
  async preflight(req: IncomingMessage, res: ServerResponse, tenant: ResolvedInstance): Promise<boolean> {
    const origin = await this.allowedOrigin(req, tenant);
    if (!origin) return false;
    this.allow(res, origin);
    res.setHeader('Access-Control-Allow-Methods', METHODS);
    res.setHeader('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS.join(','));
    res.setHeader('Access-Control-Max-Age', String(CORS_MAX_AGE_SECONDS));
    res.setHeader('Access-Control-Expose-Headers', EXPOSED);
    // Safari waits for a body without a length.
    res.statusCode = 204;
    res.setHeader('Content-Length', '0');
    res.end();
    return true;
  }

  private async allowedOrigin(req: IncomingMessage, tenant: ResolvedInstance): Promise<string | undefined> {
    const origin = req.headers.origin;
    if (!origin) return undefined;
    const allowed = this.configured ?? (await this.appOrigins.fetch(tenant.instance.id)) ?? [];
    return allowed.includes(origin) ? origin : undefined;
  }

  private allow(res: ServerResponse, origin: string): void {
    res.setHeader('Access-Control-Allow-Origin', origin);
    const vary = res.getHeader('Vary');
    res.setHeader('Vary', vary ? `${String(vary)}, Origin` : 'Origin');
    res.setHeader('Access-Control-Allow-Credentials', 'true');
  }
}
