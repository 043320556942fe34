// What every request gets before anything else, whichever dispatcher serves it: an id (echoed as
// X-Request-Id), one access-log line when it ends, the fixed security headers, and its timing.
import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders, type ServerOptions } from 'node:http';
import type { RequestHandler } from 'express';
import { logRequest, requestIdOf } from '../access-log';
import type { Logger } from '@pds/runtime';
import type { Metrics } from '@pds/runtime';
import { API_SECURITY_HEADERS, helmetHeaders } from '../security-headers';
import { clientOf, type TrustProxy } from './request';

/** A set of the envelope's headers: flat [name, value, …], and their names in lower case. */
const headerSet = (set: [string, string][]) => ({ flat: set.flat(), lower: set.map(([name]) => name.toLowerCase()) });
const PAGE = headerSet(helmetHeaders());
const API = headerSet(API_SECURITY_HEADERS);

/**
 * A response that writes the envelope's headers (the security headers, X-Request-Id) in the same
 * writeHead as the handler's, instead of one setHeader each when the request opens: setHeader checks,
 * lower-cases and stores every header, and for 13 that cost ≈ 10 µs of CPU per request
 * (docs/performance.md). The security headers are chosen by the body, known only then: an API answer
 * (JSON, or no body) gets API_SECURITY_HEADERS, anything else helmet's set for documents. A header the
 * handler set or wrote itself wins over the envelope's. Servers made by `listen` with `{ ServerResponse:
 * EnvelopedResponse }` use it; on any other response (express apps under test) openRequest makes its
 * writeHead this one.
 */
export class EnvelopedResponse extends ServerResponse {
  /** The request id, while the envelope's headers are owed. */
  envelope: string | undefined;

  override writeHead(
    statusCode: number,
    reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    const id = this.envelope;
    const message = typeof reason === 'string' ? reason : undefined;
    const given = typeof reason === 'string' ? headers : reason;
    if (id === undefined) return message === undefined ? super.writeHead(statusCode, given) : super.writeHead(statusCode, message, given);
    this.envelope = undefined;
    const all = flatHeaders(given);
    const type = valueIn(all, 'content-type') ?? this.getHeader('content-type');
    const { flat, lower } = type === undefined || isJson(String(type)) ? API : PAGE;
    for (let i = 0; i < lower.length; i++) {
      if (!this.hasHeader(lower[i]!) && valueIn(all, lower[i]!) === undefined) all.push(flat[2 * i]!, flat[2 * i + 1]!);
    }
    if (!this.hasHeader('x-request-id') && valueIn(all, 'x-request-id') === undefined) all.push('X-Request-Id', id);
    return message === undefined ? super.writeHead(statusCode, all) : super.writeHead(statusCode, message, all);
  }
}

const isJson = (type: string) => type.startsWith('application/json');

/** Node's server options under which every response is an EnvelopedResponse (`listen`'s last argument). */
export const ENVELOPED: ServerOptions = { ServerResponse: EnvelopedResponse as typeof ServerResponse };

/** Headers as writeHead takes them, as a new flat list [name, value, …]. */
function flatHeaders(headers: OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined): OutgoingHttpHeader[] {
  if (headers === undefined) return [];
  if (Array.isArray(headers)) return headers.slice();
  const flat: OutgoingHttpHeader[] = [];
  for (const name in headers) if (headers[name] !== undefined) flat.push(name, headers[name]);
  return flat;
}

/** The value a flat list gives this header (`lower`: its name in lower case), or undefined. */
function valueIn(flat: OutgoingHttpHeader[], lower: string): OutgoingHttpHeader | undefined {
  for (let i = 0; i < flat.length; i += 2) {
    const name = flat[i] as string;
    if (name.length === lower.length && name.toLowerCase() === lower) return flat[i + 1];
  }
  return undefined;
}

/** Believes no proxy: the client is the socket's peer. */
const TRUST_NO_ONE: TrustProxy = () => false;

/** What every request's envelope needs: where its line goes, and whose forwarded address the line believes. */
export interface EnvelopeOptions {
  metrics?: Metrics;
  /** TRUST_PROXY's decision (trustProxy), the same the app's pipeline uses; by default no proxy is believed. */
  trust?: TrustProxy;
}

/** Opens a request once (the fast dispatcher opens it before it may hand it to express, which must not again). */
export function openRequest(req: IncomingMessage, res: ServerResponse, logger: Logger, options: EnvelopeOptions = {}): void {
  const { metrics, trust = TRUST_NO_ONE } = options;
  if (req.id !== undefined) return;
  const started = performance.now();
  req.id = requestIdOf(req);
  // A plain response writes its head as an EnvelopedResponse does: the same headers either way.
  if (!(res instanceof EnvelopedResponse)) res.writeHead = EnvelopedResponse.prototype.writeHead;
  (res as EnvelopedResponse).envelope = req.id;
  metrics?.requestStarted();
  res.once('close', () => {
    logRequest(logger, req, res, started, clientOf(req, trust).ip);
    metrics?.requestEnded(req, res, started);
  });
}

/** The same, as the first middleware of an express app that also runs on its own (dex, tests). */
export function requestEnvelope(logger: Logger, options: EnvelopeOptions = {}): RequestHandler {
  return (req, res, next) => {
    openRequest(req, res, logger, options);
    next();
  };
}
