// What every request gets before anything else, whichever dispatcher serves it: an id (echoed as
// X-Request-Id), one access-log line when it ends, the fixed security headers, and its timing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { logRequest, requestIdOf } from '../access-log';
import type { Logger } from '@pds/runtime';
import type { Metrics } from '@pds/runtime';
import { fixedSecurityHeaders } from '../security-headers';
import { clientOf, type TrustProxy } from './request';

// helmet's defaults, which do not depend on the request: computed once.
const security = fixedSecurityHeaders();
if (!security) throw new Error('the default security headers must not depend on the request');

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
  for (const [name, value] of security!.set) res.setHeader(name, value);
  res.setHeader('X-Request-Id', req.id);
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
