// What every request gets before anything else, whichever dispatcher serves it: an id (echoed as
// X-Request-Id), one access-log line when it ends, the fixed security headers, and its timing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { logRequest, requestIdOf } from '../access-log';
import type { Logger } from '@pds/runtime';
import type { Metrics } from '@pds/runtime';
import { fixedSecurityHeaders } from '../security-headers';

// helmet's defaults, which do not depend on the request: computed once.
const security = fixedSecurityHeaders();
if (!security) throw new Error('the default security headers must not depend on the request');

/** Opens a request once (the fast dispatcher opens it before it may hand it to express, which must not again). */
export function openRequest(req: IncomingMessage, res: ServerResponse, logger: Logger, metrics?: Metrics): void {
  if (req.id !== undefined) return;
  const started = performance.now();
  req.id = requestIdOf(req);
  for (const [name, value] of security!.set) res.setHeader(name, value);
  res.setHeader('X-Request-Id', req.id);
  metrics?.requestStarted();
  res.once('close', () => {
    logRequest(logger, req, res, started);
    metrics?.requestEnded(req, res, started);
  });
}

/** The same, as the first middleware of an express app that also runs on its own (dex, tests). */
export function requestEnvelope(logger: Logger, metrics?: Metrics): RequestHandler {
  return (req, res, next) => {
    openRequest(req, res, logger, metrics);
    next();
  };
}
