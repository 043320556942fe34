// CORS as the original system answered it before it dropped it: hat-js runs inside web apps on other
// origins. Exact origins only (never "*", since responses allow credentials), X-Auth-Token allowed
// and exposed (a browser could not see the sliding session's fresh token otherwise), preflight
// cached for 3 days.
import cors from 'cors';
import type { RequestHandler } from 'express';
import { LRUCache } from 'lru-cache';
import { tenantOf } from './context';

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
  'x-amz-server-side-encryption',
];

/**
 * `configured` (CORS_ALLOWED_ORIGINS) when set, else the instance's own apps' origins. The lookup runs
 * only for requests that carry an Origin, so same-origin and server-to-server calls pay nothing, and
 * its answer is kept briefly, so a browser app's many calls do not each read the apps.
 */
export function instanceCors(configured: string[] | undefined, appOrigins: (instanceId: string) => Promise<string[]>): RequestHandler {
  const cache = new LRUCache<string, string[]>({
    max: 10_000,
    ttl: APP_ORIGINS_TTL_MS,
    fetchMethod: (instanceId) => appOrigins(instanceId),
  });
  return cors((req, callback) => {
    const origin = req.headers.origin;
    if (!origin) return callback(null, { origin: false });
    const instanceId = tenantOf(req as Parameters<typeof tenantOf>[0]).instance.id;
    const allowed = configured ? Promise.resolve(configured) : cache.fetch(instanceId).then((origins) => origins ?? []);
    allowed.then(
      (origins) =>
        callback(null, {
          origin: origins.includes(origin) ? origin : false,
          credentials: true,
          exposedHeaders: ['X-Auth-Token', 'X-Request-Id'],
          allowedHeaders: CORS_ALLOWED_HEADERS,
          methods: ['GET', 'POST', 'PUT', 'DELETE'],
          maxAge: CORS_MAX_AGE_SECONDS,
        }),
      (error: Error) => callback(error),
    );
  });
}
