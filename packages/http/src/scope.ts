// Express tries every route of every router mounted without a path, so with a dozen feature routers a
// request walks some fifty route patterns before it reaches its own. A scoped router is skipped with one
// comparison when the path is not under one of its prefixes.
import type { RequestHandler } from 'express';

/**
 * Runs `handler` (a router whose routes carry their full paths) only for paths under one of `prefixes`.
 * A prefix matches itself and the paths below it, case-insensitively, as express's own matching does.
 */
export function scoped(prefixes: readonly string[], handler: RequestHandler): RequestHandler {
  const lower = prefixes.map((prefix) => prefix.toLowerCase());
  const scopedHandler: RequestHandler = (req, res, next) => {
    const path = req.path.toLowerCase();
    return lower.some((prefix) => path === prefix || path.startsWith(`${prefix}/`)) ? handler(req, res, next) : next();
  };
  // Like a Router, it shows its routes to whoever lists the app's routes (the OpenAPI coverage check).
  return Object.assign(scopedHandler, { stack: (handler as { stack?: unknown }).stack });
}
