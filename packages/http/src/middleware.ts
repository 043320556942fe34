import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { ApiError, type ErrorKind } from './errors';
import type { Logger } from '@pds/runtime';
import { requestEnvelope, type EnvelopeOptions } from './routing/envelope';
import { sendError } from './routing/render';
import { checkRequestTarget } from './url';

/**
 * An express app with what every request gets (id, access log, security headers, timing) and the
 * request target check. Declared routes read their own bodies (routing/serve.ts); the app parses none.
 */
export function createBaseApp(logger: Logger, options: EnvelopeOptions = {}): Express {
  const app = express();
  app.disable('x-powered-by');
  // No ETag: these are per-caller API answers that no client revalidates, and express would hash every body for it.
  app.set('etag', false);
  app.use(requestEnvelope(logger, options));
  app.use(checkRequestTarget);
  return app;
}

/** Ends the middleware chain: unknown routes answer 404, errors render as `{ error, message }`. */
export function finishApp(app: Express, logger: Logger): void {
  app.use(notFoundHandler);
  app.use(errorHandler(logger));
}

export const notFoundHandler: RequestHandler = (req) => {
  throw ApiError.notFound(`No handler for ${req.method} ${req.path}`);
};

/** Express's errors through the one renderer. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, _req, res, _next) => sendError(res, err, logger);
}

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
  410: 'Gone',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  423: 'Locked',
  429: 'Too Many Requests',
};

function kindOf(status: number): ErrorKind {
  return KINDS[status] ?? 'Bad Request';
}

/** A fixed message per status: library messages may quote the input or internals. */
function clientMessage(status: number): string {
  return status === 400 ? 'The request could not be understood (malformed path, query or body)' : `Request refused (${status})`;
}
