// The original served its older API versions' routes under /api/v2 and /api/v2.0 as well as /api/v2.6
// (its v20.routes), and clients written against them still call those prefixes. Each route below is
// declared once, under /api/v2.6; this gives the ones the original had there the two older paths too,
// as path aliases, so both dispatchers and the OpenAPI document know them.
import type { GatewayRoute } from '../route';

const CURRENT = '/api/v2.6';
const OLDER = ['/api/v2', '/api/v2.0'];

/** `method path-after-the-prefix` of the original's v20.routes that this cluster serves. */
export const V20_ROUTES: ReadonlySet<string> = new Set([
  'post /files/upload',
  'post /files/search',
  'put /files/file/:fileId/complete',
  'get /files/file/:fileId',
  'put /files/file/:fileId',
  'delete /files/file/:fileId',
  'get /files/content/:fileId',
  'post /files/allowAccess/:userId',
  'post /files/restrictAccess/:userId',
  'get /files/allowAccess/:fileId/:userId',
  'get /files/restrictAccess/:fileId/:userId',
  'get /files/allowAccessPublic/:fileId',
  'get /files/restrictAccessPublic/:fileId',
  'post /combinator/*name',
  'get /combinator/*name',
  'get /data/sources',
  'get /data/:namespace/*endpoint',
  'post /data/:namespace/*endpoint',
  'delete /data/:namespace/*endpoint',
  'put /data',
  'delete /data',
  'post /data-link',
  'post /data-batch',
  'post /data-bundle/:name',
  'get /data-bundle/:name',
  'get /data-bundle/:name/structure',
  'get /data-debit',
  'get /data-debit/:key',
  'get /data-debit/:key/values',
  'get /data-debit/:key/enable',
  'get /data-debit/:key/disable',
  'post /data-debit/:key',
  'put /data-debit/:key',
  'get /applications',
  'get /applications/:appId',
  'get /applications/:appId/setup',
  'get /applications/:appId/disable',
  'get /applications/:appId/access-token',
  'get /she/function',
  'get /phata/profile',
  'get /system/status',
]);

/** The routes with their /api/v2 and /api/v2.0 paths added where the original had them. */
export function withOlderPrefixes(routes: GatewayRoute[]): GatewayRoute[] {
  return routes.map((route) => {
    const paths = typeof route.path === 'string' ? [route.path] : route.path;
    const older = paths.flatMap((path) => {
      const rest = path.startsWith(`${CURRENT}/`) ? path.slice(CURRENT.length) : undefined;
      return rest !== undefined && V20_ROUTES.has(`${route.method} ${rest}`) ? OLDER.map((prefix) => prefix + rest) : [];
    });
    return older.length ? { ...route, path: [...paths, ...older] } : route;
  });
}
