// helmet's security headers, computed once: with its options fixed, helmet sets the same headers on
// every response, so running its dozen middlewares per request buys nothing.
import type { RequestHandler } from 'express';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * The security headers of an API answer (JSON, a redirect, no body), as OWASP's REST Security Cheat
 * Sheet lists them: should a browser ever show one as a document, nothing loads in it, no page frames
 * it, its type is not sniffed; and another origin cannot embed it (CORP), nor learn through a redirect
 * the address that asked (Referrer-Policy). helmet's other defaults govern documents (the opener, the
 * agent cluster, DNS prefetching, IE's download prompt, Flash's and PDF's policies, the XSS auditor);
 * on an answer that is data they do nothing but make its head 400 bytes longer.
 */
export const API_SECURITY_HEADERS: [string, string][] = [
  ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
  ['Cross-Origin-Resource-Policy', 'same-origin'],
  ['Referrer-Policy', 'no-referrer'],
  ['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
];

export function securityHeaders(options?: HelmetOptions): RequestHandler {
  const fixed = fixedSecurityHeaders(options);
  // Options whose values depend on the request (CSP nonces) would not fit a fixed set: run helmet then.
  if (!fixed) return helmet(options) as RequestHandler;
  return (_req, res, next) => {
    for (const [name, value] of fixed.set) res.setHeader(name, value);
    for (const name of fixed.removed) res.removeHeader(name);
    next();
  };
}

/** The headers helmet sets (and removes) on every response, or undefined when they depend on the request. */
export function fixedSecurityHeaders(options?: HelmetOptions): { set: [string, string][]; removed: string[] } | undefined {
  const set: [string, string][] = [];
  const removed: string[] = [];
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      set.push([name, String(value)]);
    },
    removeHeader(name: string) {
      removed.push(name);
    },
  };
  let ran = false;
  helmet(options)({} as never, recorder as never, (error?: unknown) => {
    if (error) throw error;
    ran = true;
  });
  return ran && !usesRequestFunctions(options) ? { set, removed } : undefined;
}

function usesRequestFunctions(options: HelmetOptions | undefined): boolean {
  const csp = options?.contentSecurityPolicy;
  if (!csp || typeof csp !== 'object') return false;
  return Object.values(csp.directives ?? {}).some((value) =>
    Array.isArray(value) ? value.some((v) => typeof v === 'function') : typeof value === 'function',
  );
}
