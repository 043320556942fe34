// Request ids and one access-log line per request, kept lean: this runs on every request, and
// pino-http's per-request child logger and serializers cost 60–110 µs of CPU each time.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from './logger';

declare module 'node:http' {
  interface IncomingMessage {
    /** X-Request-Id: the caller's, when well-formed, else generated. */
    id: string;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Query strings can carry tokens and passwords (GET /?access_token=…); only the path is logged. */
function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
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
