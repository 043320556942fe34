// Request ids and one access-log line per request, kept lean: this runs on every request. pino-http's
// per-request child logger and serializers cost 60–110 µs of CPU each time, and even a plain pino call
// (object walk, redaction, one write per line) cost ≈ 7 µs; the line here is written as JSON text and
// the lines of one turn of the event loop go out in one write (docs/performance.md).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { destinationOf, type Logger } from '@pds/runtime';

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

/** Access lines of one turn of the event loop, written to the logger's destination together. */
class AccessLines {
  private pending = '';

  constructor(
    private readonly write: (text: string) => void,
    /** `"name":"gateway",` or empty: pino's `name` field, as every other line of the process has it. */
    readonly name: string,
  ) {}

  add(line: string): void {
    if (this.pending === '') setImmediate(this.flush);
    this.pending += line;
  }

  readonly flush = (): void => {
    const text = this.pending;
    this.pending = '';
    if (text !== '') this.write(text);
  };
}

const accessLines = new WeakMap<Logger, AccessLines | null>();

function linesOf(logger: Logger): AccessLines | null {
  let lines = accessLines.get(logger);
  if (lines === undefined) {
    const out = destinationOf(logger);
    lines = out ? new AccessLines((text) => out.destination.write(text), out.name ? `"name":${JSON.stringify(out.name)},` : '') : null;
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
  lines.add(
    `{"level":30,"time":${Date.now()},${lines.name}"reqId":${JSON.stringify(req.id)},"method":${JSON.stringify(req.method)},` +
      `"path":${JSON.stringify(path)},"status":${status},"ms":${ms},"ip":${JSON.stringify(ip)}${aborted ? ',"aborted":true' : ''},"msg":"request"}\n`,
  );
}
