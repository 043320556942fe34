// A lane in front of express for an app's most frequent requests. Express 5 spends ≈ 60 µs of CPU
// per request before its first middleware runs (prototype swaps, router set-up: 72 µs for a route
// answering at once against 10 µs for node:http on this machine, docs/performance.md), which is
// more than the whole work of a cached token check and one primary-key read. The lane answers the
// plain, successful case of a few GET routes itself and hands every other request to express
// untouched: another method or path, a query string, a body, an Origin (CORS), a conditional or
// forwarded header, and any answer the route does not give itself (refusals, errors). So express
// stays the one place where errors, CORS and every other route are answered; a GET changes nothing,
// so handing it over after the lane has done some of its work is safe.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express } from 'express';
import { logRequest } from './access-log';
import type { Logger } from './logger';
import type { Metrics } from './metrics';
import { fixedSecurityHeaders } from './security-headers';

/** What a hot route answers: a status, its own headers and a body with its type. */
export interface HotAnswer {
  status: number;
  /** Name and value pairs, after the security headers and X-Request-Id. */
  headers?: [string, string][];
  body?: { type: string; text: string };
}

export interface HotRoute {
  /** Its route template, as express routes are labelled in metrics (`/api/v2.6/files/file/:fileId`). */
  route: string;
  /** The whole path it takes; its groups are the parameters, which must need no decoding. */
  path: RegExp;
  /** The answer to a plain GET; undefined (or a throw) hands the request to express. */
  answer(req: IncomingMessage, params: string[]): Promise<HotAnswer | undefined>;
}

/** Headers that make a GET more than plain: express (and its CORS, conditional and proxy handling) answers those. */
const HANDED_OVER = ['origin', 'if-none-match', 'if-modified-since', 'x-forwarded-host', 'transfer-encoding'];

type Handle = (req: IncomingMessage, res: ServerResponse, callback?: (error?: unknown) => void) => void;

/**
 * Puts `routes` in front of `app`: the app still serves everything (`app.listen`, supertest, mounting),
 * through its own `handle`, which express calls for every request.
 */
export function serveHotRoutes(app: Express, options: { logger: Logger; metrics?: Metrics; routes: HotRoute[] }): void {
  const { logger, metrics, routes } = options;
  const express = app as unknown as { handle: Handle };
  const viaExpress = express.handle.bind(app);
  // The base app's own set (createBaseApp runs helmet with its defaults, which are fixed).
  const fixed = fixedSecurityHeaders();
  if (!fixed) throw new Error('the hot lane needs security headers that do not depend on the request');
  const security = fixed.set.flat();

  async function answer(req: IncomingMessage, res: ServerResponse, route: HotRoute, params: string[]): Promise<boolean> {
    const started = performance.now();
    const answered = await route.answer(req, params).catch(() => undefined);
    if (!answered) return false;
    metrics?.timeRequest(req, res, () => route.route, started);
    const headers = [...security, 'X-Request-Id', logRequest(logger, req, res, started)];
    for (const [name, value] of answered.headers ?? []) headers.push(name, value);
    const { body } = answered;
    if (body) headers.push('Content-Type', body.type);
    // Always a length (0 without a body), as express's res.end() sends: else node would answer chunked.
    headers.push('Content-Length', body ? String(Buffer.byteLength(body.text)) : '0');
    res.writeHead(answered.status, headers);
    res.end(body?.text);
    return true;
  }

  express.handle = (req, res, callback) => {
    const hot = plainGet(req) && match(routes, req.url as string);
    if (!hot) return viaExpress(req, res, callback);
    answer(req, res, hot.route, hot.params).then(
      (answered) => answered || viaExpress(req, res, callback),
      () => viaExpress(req, res, callback),
    );
  };
}

function plainGet(req: IncomingMessage): boolean {
  if (req.method !== 'GET') return false;
  const length = req.headers['content-length'];
  if (length !== undefined && length !== '0') return false;
  return !HANDED_OVER.some((name) => req.headers[name] !== undefined);
}

function match(routes: HotRoute[], url: string): { route: HotRoute; params: string[] } | undefined {
  // A query string always goes to express: it parses and checks it (tokens, storable values).
  if (url.includes('?')) return undefined;
  for (const route of routes) {
    const found = route.path.exec(url);
    if (found) return { route, params: found.slice(1) };
  }
  return undefined;
}
