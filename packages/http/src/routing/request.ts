// What a request says about itself, read the same way by both dispatchers and without a framework:
// its path and query, its JSON body, and who sent it. Forwarded headers (X-Forwarded-Host/-For/-Proto)
// count only when the peer is a trusted proxy (TRUST_PROXY); from anyone else they are ignored.
import type { IncomingMessage } from 'node:http';
import { parse as parseQuery, type ParsedUrlQuery } from 'node:querystring';
import type { TLSSocket } from 'node:tls';
import proxyAddr from 'proxy-addr';
import { ApiError } from '../errors';
import { JSON_BODY_LIMIT_BYTES, readBody } from '../body';
import { assertStorable, assertStorableDeep } from '../strings';

/** Whether a peer address (at a hop, 0 = the socket's) is a proxy whose forwarded headers are believed. */
export type TrustProxy = (address: string, hop: number) => boolean;

/**
 * TRUST_PROXY: `false` (no proxy), `true` (every peer: only when the port is reachable through the proxy
 * alone), or addresses, CIDRs and proxy-addr's names (`loopback`, `uniquelocal`, `linklocal`).
 */
export function trustProxy(setting: boolean | readonly string[]): TrustProxy {
  if (setting === true) return () => true;
  if (setting === false || setting.length === 0) return () => false;
  const compiled = proxyAddr.compile([...setting]);
  // proxy-addr parses the address on every call (≈ 1–2 µs); a proxy's few addresses repeat on every request.
  const known = new Map<string, boolean>();
  return (address) => {
    let trusted = known.get(address);
    if (trusted === undefined) {
      trusted = compiled(address, 0);
      if (known.size >= 1000) known.clear();
      known.set(address, trusted);
    }
    return trusted;
  };
}

/** The client as the gateway should see it: the address it named, its own address, and the scheme it used. */
export interface Client {
  /** The Host (or a trusted proxy's X-Forwarded-Host), as sent: port included. */
  host: string;
  ip: string;
  protocol: 'http' | 'https';
}

const firstValue = (value: string | string[] | undefined): string | undefined => {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  const comma = text.indexOf(',');
  return (comma === -1 ? text : text.slice(0, comma)).trim() || undefined;
};

export function clientOf(req: IncomingMessage, trust: TrustProxy): Client {
  const peer = req.socket.remoteAddress ?? '';
  const own: Client = {
    host: req.headers.host ?? '',
    ip: peer,
    protocol: (req.socket as TLSSocket).encrypted ? 'https' : 'http',
  };
  if (!trust(peer, 0)) return own;
  const proto = firstValue(req.headers['x-forwarded-proto']);
  return {
    host: firstValue(req.headers['x-forwarded-host']) ?? own.host,
    ip: forwardedFor(req.headers['x-forwarded-for'], peer, trust),
    protocol: proto === 'https' || proto === 'http' ? proto : own.protocol,
  };
}

/**
 * The client behind a chain of trusted proxies, as proxy-addr finds it: X-Forwarded-For read from the
 * nearest hop back, the first address that is not a trusted proxy (or the farthest one given).
 */
function forwardedFor(header: string | string[] | undefined, peer: string, trust: TrustProxy): string {
  const text = Array.isArray(header) ? header.join(',') : header;
  if (!text) return peer;
  const hops = text.split(',');
  let client = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!trust(client, 0)) return client;
    client = (hops[i] as string).trim();
  }
  return client;
}

/** The path and query of a request target, the query parsed as express's default ("simple") parser does. */
export function targetOf(req: IncomingMessage): { path: string; query: ParsedUrlQuery } {
  const url = req.url ?? '/';
  const mark = url.indexOf('?');
  return mark === -1 ? { path: url, query: {} } : { path: url.slice(0, mark), query: parseQuery(url.slice(mark + 1)) };
}

/**
 * A path whose percent-encoding does not decode (`/data/%zz/x`) or that decodes to a NUL, and query values
 * that cannot be stored, are a 400 before any route runs, never a URIError or a database error deep inside.
 */
export function checkTarget(path: string, query: ParsedUrlQuery): void {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    throw ApiError.badRequest('path: broken percent-encoding');
  }
  assertStorable(decoded, 'path');
  assertStorableDeep(query, 'query');
}

const JSON_TYPE = /^application\/(?:json|[^;\s]*\+json)\s*(?:;|$)/i;

/**
 * The request's JSON body, or undefined when it sent none (or another media type): parsed by the bounded
 * reader of body.ts, which turns every malformed, oversized or hostile body into a 4xx.
 */
export async function readJsonBody(req: IncomingMessage, limitBytes = JSON_BODY_LIMIT_BYTES): Promise<unknown> {
  const type = req.headers['content-type'];
  // As type-is decides whether a request has a body at all: a length (even 0) or a transfer coding.
  const hasBody = req.headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(req.headers['content-length'] ?? NaN));
  if (!hasBody || !type || !JSON_TYPE.test(type)) return undefined;
  try {
    return await readBody(req, limitBytes);
  } catch (error) {
    // Leave the connection in a usable state: whatever was not read is discarded.
    req.resume();
    throw error;
  }
}
