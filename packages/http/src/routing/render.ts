// The one renderer: every answer and every refusal of both dispatchers is written here, the same bytes
// whichever dispatcher served the request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@pds/runtime';
import { toApiError } from '../middleware';
import type { Reply } from './route';

const JSON_TYPE = 'application/json; charset=utf-8';

export function sendReply(res: ServerResponse, reply: Reply): void {
  // One writeHead with every header: on an EnvelopedResponse nothing is set one by one (envelope.ts).
  const headers: string[] = [];
  if (reply.headers) for (const name in reply.headers) headers.push(name, reply.headers[name] as string);
  let body: string | undefined;
  if (reply.json !== undefined) {
    body = JSON.stringify(reply.json);
    headers.push('Content-Type', JSON_TYPE);
  } else if (reply.jsonText) {
    body = reply.jsonText.body;
    headers.push('Content-Type', JSON_TYPE);
  } else if (reply.text) {
    body = reply.text.body;
    headers.push('Content-Type', reply.text.type);
  }
  // Always a length (0 without a body): node would answer chunked otherwise.
  headers.push('Content-Length', String(body === undefined ? 0 : Buffer.byteLength(body)));
  res.writeHead(reply.status, headers);
  res.end(body);
}

/** `{error, message}` with the catalogue's status; a 5xx is logged with the request's id, never shown. */
export function sendError(res: ServerResponse, error: unknown, logger: Logger): void {
  const apiError = toApiError(error);
  const req = res.req as IncomingMessage | undefined;
  if (apiError.status >= 500) logger.error({ err: error, reqId: req?.id }, 'request failed');
  // Part of an answer is out (a stream failed midway): the client must not take it for a whole one.
  if (res.headersSent) return void res.destroy();
  sendReply(res, {
    status: apiError.status,
    headers: apiError.extra.headers,
    json: { error: apiError.kind, message: apiError.message, ...apiError.extra.body },
  });
}
