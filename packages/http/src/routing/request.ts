// What a request says about itself, read the same way by both dispatchers and without a framework:
// its path and query, its JSON body, and who sent it. Forwarded headers (X-Forwarded-Host/-For/-Proto)
// count only when the peer is a trusted proxy (TRUST_PROXY); from anyone else they are ignored.
import type { IncomingMessage } from 'node:http';
import { isIP, isIPv4 } from 'node:net';
import { parse as parseQuery, type ParsedUrlQuery } from 'node:querystring';
import type { TLSSocket } from 'node:tls';
import proxyAddr from 'proxy-addr';
import { ApiError } from '../errors';
import { JSON_BODY_LIMIT_BYTES, readBody } from '../body';
import { assertStorable, assertStorableDeep } from '../strings';

/**
 * Whether the address at a hop is a proxy whose forwarded headers are believed, as proxy-addr asks it:
 * hop 0 is the socket's peer, hop 1 the last address in X-Forwarded-For (the one the peer appended), and so on.
 */
export type TrustProxy = (address: string, hop: number) => boolean;

/**
 * TRUST_PROXY (packages/config): how many proxies stand in front (their addresses are not looked at),
 * or the proxies' addresses, CIDRs and proxy-addr's names (`loopback`, `uniquelocal`, `linklocal`).
 * 0 or an empty list believes no one.
 */
export function trustProxy(setting: number | readonly string[]): TrustProxy {
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  if (setting.length === 0) return () => false;
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

const CLIENT = Symbol('client');

/** The client of a request; worked out once per request (the pipeline, Host routing and the access log all ask). */
export function clientOf(req: IncomingMessage, trust: TrustProxy): Client {
  const known = (req as { [CLIENT]?: Client })[CLIENT];
  if (known) return known;
  const client = readClient(req, trust);
  (req as { [CLIENT]?: Client })[CLIENT] = client;
  return client;
}

function readClient(req: IncomingMessage, trust: TrustProxy): Client {
  const peer = plainAddress(req.socket.remoteAddress ?? '');
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

/** An IPv4 client of a dual-stack socket (`::ffff:192.0.2.7`) as the IPv4 address it is. */
const plainAddress = (address: string) => (address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address);

/**
 * The client behind a chain of trusted proxies, as proxy-addr finds it: X-Forwarded-For read from the
 * nearest hop back, the first address that is not a trusted proxy (or the farthest one given). An entry
 * that is not an address (a proxy that wrote something else) ends the chain at the proxy that wrote it.
 */
function forwardedFor(header: string | string[] | undefined, peer: string, trust: TrustProxy): string {
  const text = Array.isArray(header) ? header.join(',') : header;
  if (!text) return peer;
  const hops = text.split(',');
  let client = peer;
  for (let hop = 1; hop <= hops.length; hop++) {
    const next = plainAddress((hops[hops.length - hop] as string).trim());
    if (!isIP(next)) return client;
    client = next;
    if (!trust(client, hop)) return client;
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

/** A JSON media type: `application/json`, or any `application/…+json`, with parameters or not. */
export const JSON_TYPE = /^application\/(?:json|[^;\s]*\+json)\s*(?:;|$)/i;

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
