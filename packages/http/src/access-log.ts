// Request ids and one access-log line per request, kept lean: this runs on every request. pino-http's
// per-request child logger and serializers cost 60–110 µs of CPU each time, and even a plain pino call
// (object walk, redaction, one write per line) cost ≈ 7 µs; the line here is written as JSON text and
// goes out with others in one write (runtime's LineBatch; docs/performance.md).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { destinationOf, lineBatchOf, type LineBatch, type Logger } from '@pds/runtime';

declare module 'node:http' {
  interface IncomingMessage {
    /** X-Request-Id: the caller's, when well-formed, else generated. */
    id: string;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's X-Request-Id when well-formed, else a new one. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/** Query strings can carry tokens and passwords (GET /?access_token=…); only the path is logged. */
function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** Where a logger's access lines go: its batch of lines, and pino's `name` field (`"name":"gateway",` or empty). */
const accessLines = new WeakMap<Logger, { batch: LineBatch; name: string } | null>();

function linesOf(logger: Logger): { batch: LineBatch; name: string } | null {
  let lines = accessLines.get(logger);
  if (lines === undefined) {
    const batch = lineBatchOf(logger);
    const name = destinationOf(logger)?.name;
    lines = batch ? { batch, name: name ? `"name":${JSON.stringify(name)},` : '' } : null;
    accessLines.set(logger, lines);
  }
  return lines;
}

/**
 * The request's line, when its response ends or the client goes away: id, method, path, status,
 * milliseconds, and the client's address (`ip`: behind a trusted proxy the one it forwarded, clientOf).
 */
export function logRequest(logger: Logger, req: IncomingMessage, res: ServerResponse, started: number, ip: string): void {
  const status = res.statusCode;
  const ms = Math.round((performance.now() - started) * 10) / 10;
  const path = pathOf(req.url ?? '/');
  const aborted = !res.writableFinished;
  if (status >= 500) {
    if (logger.isLevelEnabled('error'))
      logger.error({ reqId: req.id, method: req.method, path, status, ms, ip, ...(aborted ? { aborted } : {}) }, 'request failed');
    return;
  }
  const lines = logger.isLevelEnabled('info') ? linesOf(logger) : null;
  if (!lines) return;
  lines.batch.add(
    `{"level":30,"time":${Date.now()},${lines.name}"reqId":${JSON.stringify(req.id)},"method":${JSON.stringify(req.method)},` +
      `"path":${JSON.stringify(path)},"status":${status},"ms":${ms},"ip":${JSON.stringify(ip)}${aborted ? ',"aborted":true' : ''},"msg":"request"}\n`,
  );
}
