import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { accessLog } from './access-log';
import { jsonBodyParser } from './body';
import { useDirectJson } from './json-response';
import { ApiError, type ErrorKind } from './errors';
import { checkRequestTarget } from './url';
import type { Logger } from './logger';
import { securityHeaders } from './security-headers';

/** An express app with the parts every service shares: security headers, request ids, logs, JSON bodies. */
export function createBaseApp(
  logger: Logger,
  options: {
    trustProxy?: boolean;
    /** Paths whose bodies are streamed by their route as raw bytes (e.g. blob uploads), never parsed as JSON. */
    rawBodyPrefixes?: string[];
    /** Request metrics (Metrics.requests), first so that every request is counted. */
    metrics?: RequestHandler;
  } = {},
): Express {
  const app = express();
  if (options.metrics) app.use(options.metrics);
  app.disable('x-powered-by');
  // No ETag: these are per-caller API answers that no client revalidates, and express would hash every body for it.
  app.set('etag', false);
  useDirectJson(app);
  app.set('trust proxy', options.trustProxy ?? false);
  app.use(securityHeaders());
  app.use(accessLog(app, logger));
  app.use(checkRequestTarget);
  const json = jsonBodyParser();
  const raw = options.rawBodyPrefixes ?? [];
  app.use((req, res, next) => (raw.some((prefix) => req.path.startsWith(`${prefix}/`)) ? next() : json(req, res, next)));
  return app;
}

/** Ends the middleware chain: unknown routes answer 404, errors render as `{ error, message }`. */
export function finishApp(app: Express): void {
  app.use(notFoundHandler);
  app.use(errorHandler);
}

export const notFoundHandler: RequestHandler = (req) => {
  throw ApiError.notFound(`No handler for ${req.method} ${req.path}`);
};

export const errorHandler: ErrorRequestHandler = (err, req, res, _next) => {
  const apiError = toApiError(err);
  if (apiError.status >= 500) req.log?.error({ err }, 'request failed');
  if (res.headersSent) return;
  for (const [name, value] of Object.entries(apiError.extra.headers ?? {})) res.setHeader(name, value);
  res.status(apiError.status).json({ error: apiError.kind, message: apiError.message, ...apiError.extra.body });
};

/** Maps anything thrown to the catalogue; internals never reach the client. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as { type?: string; status?: number; code?: string; name?: string; message?: string };
  // Express's own refusals (e.g. a route parameter that does not decode) carry a 4xx status.
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500)
    return new ApiError(e.status, kindOf(e.status), clientMessage(e.status));
  if (isUnavailable(e)) return ApiError.unavailable();
  return new ApiError(500, 'Internal Server Error', 'An unexpected error occurred');
}

function isUnavailable(e: { code?: string; name?: string; message?: string } | undefined): boolean {
  if (!e) return false;
  if (
    [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'EHOSTUNREACH',
      'P1001',
      'P1002',
      'P1017',
      'P2024',
      'P2028',
      '57P01',
      '57P02',
      '57P03',
    ].includes(e.code ?? '')
  )
    return true;
  if (e.name === 'MaxRetriesPerRequestError' || e.name === 'QueueUnavailableError') return true;
  // ioredis on a request-path connection (packages/queue connections.ts) fails fast with these.
  return /Connection is closed|connect ECONNREFUSED|Can't reach database server|enableOfflineQueue|Command timed out|Connection terminated|terminating connection/.test(
    e.message ?? '',
  );
}

const KINDS: Record<number, ErrorKind> = {
  401: 'Not Authenticated',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
};

function kindOf(status: number): ErrorKind {
  return KINDS[status] ?? 'Bad Request';
}

/** A fixed message per status: library messages may quote the input or internals. */
function clientMessage(status: number): string {
  return status === 400 ? 'The request could not be understood (malformed path, query or body)' : `Request refused (${status})`;
}
