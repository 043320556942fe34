// Request ids and one access-log line per request, kept lean: this runs on every request, and
// pino-http's per-request child logger and serializers cost 60–110 µs of CPU each time.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express, RequestHandler } from 'express';
import type { Logger } from './logger';

declare module 'node:http' {
  interface IncomingMessage {
    /** X-Request-Id: the caller's, when well-formed, else generated. */
    id: string;
    /** A logger whose lines carry this request's id (created on first use). */
    log: Logger;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Query strings can carry tokens and passwords (GET /?access_token=…); only the path is logged. */
function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/**
 * Gives each request an id (echoed as X-Request-Id) and logs one line when its response ends or the
 * client goes away: request id, method, path, status and milliseconds.
 */
export function accessLog(app: Express, logger: Logger): RequestHandler {
  // req.log is made only by the requests that log something of their own (errors, mostly).
  Object.defineProperty(app.request, 'log', {
    configurable: true,
    get(this: IncomingMessage & { _log?: Logger }) {
      return (this._log ??= logger.child({ reqId: this.id }));
    },
  });
  return (req, res, next) => {
    res.setHeader('X-Request-Id', logRequest(logger, req, res));
    next();
  };
}

/** Gives the request its id and logs its line when the response ends; returns the id, for X-Request-Id. */
export function logRequest(logger: Logger, req: IncomingMessage, res: ServerResponse, started = performance.now()): string {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  req.id = id;
  const url = req.url ?? '/';
  res.once('close', () => logLine(logger, req, res, id, url, started));
  return id;
}

function logLine(logger: Logger, req: IncomingMessage, res: ServerResponse, id: string, url: string, started: number): void {
  const failed = res.statusCode >= 500;
  if (!logger.isLevelEnabled(failed ? 'error' : 'info')) return;
  const line = {
    reqId: id,
    method: req.method,
    path: pathOf(url),
    status: res.statusCode,
    ms: Math.round((performance.now() - started) * 10) / 10,
    ...(res.writableFinished ? {} : { aborted: true }),
  };
  if (failed) logger.error(line, 'request failed');
  else logger.info(line, 'request');
}
