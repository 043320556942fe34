// The fast dispatcher: a node:http request listener that serves the declared routes itself and hands
// everything else to `fallback` (the express app). Express 5 spends ≈ 60 µs of CPU per request before
// its first middleware runs (docs/performance.md); a table lookup and the shared pipeline cost a few.
// It matches paths as express's router does (path-to-regexp with the same options), so a route is
// found by the same rules whichever dispatcher serves it, and nothing is written twice: both call
// serveRoute (serve.ts) with the route's one declaration.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { match, type MatchFunction } from 'path-to-regexp';
import type { Logger } from '@pds/runtime';
import type { Metrics } from '@pds/runtime';
import { openRequest } from './envelope';
import { pathsOf, type AnyRoute } from './route';
import type { TrustProxy } from './request';
import { serveRoute, type Pipeline } from './serve';

interface Entry {
  route: AnyRoute;
  template: string;
  /** The path's text before its first parameter: most routes are ruled out by it without a regex. */
  literal: string;
  match: MatchFunction<Record<string, string | string[]>>;
}

/** As express's router decodes parameters: untouched without a `%`, else decodeURIComponent (throws on bad input). */
const decodeParam = (value: string) => (value.indexOf('%') === -1 ? value : decodeURIComponent(value));

function entriesOf(routes: readonly AnyRoute[]): Map<string, Entry[]> {
  const byMethod = new Map<string, Entry[]>();
  for (const route of routes) {
    if (route.fast === false) continue;
    const method = route.method.toUpperCase();
    const entries = byMethod.get(method) ?? [];
    for (const template of pathsOf(route)) {
      const loose = template === '/' ? template : template.replace(/\/+$/, '');
      entries.push({
        route,
        template,
        literal: /^[^:*{(]*/.exec(loose)?.[0]?.toLowerCase() ?? '',
        match: match(loose, { sensitive: false, end: true, trailing: true, decode: decodeParam }),
      });
    }
    byMethod.set(method, entries);
  }
  return byMethod;
}

export interface DispatcherOptions {
  /** In declaration order: the first that matches serves, as in express. */
  routes: readonly AnyRoute[];
  pipeline: Pipeline;
  /** Serves what no fast route takes (other methods, pages, assets, unknown paths). */
  fallback: RequestListener;
  logger: Logger;
  metrics?: Metrics;
  /** TRUST_PROXY's decision, for the access log's client address (the pipeline has its own). */
  trust?: TrustProxy;
}

export function createDispatcher(options: DispatcherOptions): RequestListener {
  const { pipeline, fallback, logger, metrics, trust } = options;
  const byMethod = entriesOf(options.routes);
  const envelope = { metrics, trust };

  function find(method: string, path: string): { entry: Entry; params: Record<string, unknown> } | undefined {
    const entries = byMethod.get(method);
    if (!entries) return undefined;
    const lower = path.toLowerCase();
    for (const entry of entries) {
      if (!lower.startsWith(entry.literal)) continue;
      const found = entry.match(path);
      if (found) return { entry, params: found.params };
    }
    return undefined;
  }

  return (req: IncomingMessage, res: ServerResponse) => {
    openRequest(req, res, logger, envelope);
    const url = req.url ?? '/';
    const mark = url.indexOf('?');
    let found: ReturnType<typeof find>;
    try {
      found = find(req.method ?? 'GET', mark === -1 ? url : url.slice(0, mark));
    } catch {
      // A parameter that does not decode: express answers it (400), as for every route.
      found = undefined;
    }
    if (!found) return fallback(req, res);
    const { entry, params } = found;
    serveRoute(entry.route, entry.template, pipeline, req, res, params, logger).then(
      (served) => served || fallback(req, res),
      (error: unknown) => {
        // serveRoute answers its own failures; reaching here is a bug in the renderer itself.
        logger.error({ err: error, reqId: req.id }, 'fast dispatcher failed');
        metrics?.dispatchFailed();
        if (!res.headersSent) fallback(req, res);
        else res.destroy();
      },
    );
  };
}
