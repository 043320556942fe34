// helmet's security headers, computed once: with its options fixed, helmet sets the same headers on
// every response, so running its dozen middlewares per request buys nothing.
import type { RequestHandler } from 'express';
import helmet, { type HelmetOptions } from 'helmet';

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
