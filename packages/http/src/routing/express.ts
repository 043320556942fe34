// The same route table as express routes: each declaration becomes one express route per path, served
// by the same pipeline and renderer as the fast dispatcher (serve.ts). Express then serves a route the
// fast dispatcher does not take (HEAD, `fast: false`), and is a complete server on its own.
import { Router } from 'express';
import type { Logger } from '@pds/runtime';
import { pathsOf, type AnyRoute } from './route';
import { serveRoute, type Pipeline } from './serve';

export function expressRoutes(routes: readonly AnyRoute[], pipeline: Pipeline, logger: Logger): Router {
  const router = Router();
  for (const route of routes) {
    for (const template of pathsOf(route)) {
      router[route.method](template, (req, res, next) =>
        serveRoute(route, template, pipeline, req, res, req.params, logger).then((served) => {
          if (!served) next();
        }),
      );
    }
  }
  return router;
}
