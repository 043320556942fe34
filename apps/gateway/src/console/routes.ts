// Serves the web console (apps/console's Vite build) to browsers: the sign-up page on the bare
// cluster domain, the owner's console on instance addresses. API clients keep the JSON answers of
// GET / (CONTRACT §1): only a request that prefers HTML and carries no credentials gets a page.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import express, { Router, type Request, type RequestHandler, type Response } from 'express';
import { tenantOf } from '../context';
import { requestHost } from '../instances/tenancy';
import { consoleCsp, type CspSources } from './csp';

export interface ConsoleOptions {
  /** The console's build folder; when it holds no build the console is off and GET / stays JSON. */
  dist: string;
  clusterDomain: string;
  blobOrigin?: string;
  /** Origins of the logos of an instance's apps, allowed as images in its console. */
  logoOrigins(instanceId: string): Promise<string[]>;
}

const CREDENTIAL_PARAMS = ['access_token', 'username', 'pass', 'password'];

/** A browser navigation to the page, not an API call: HTML preferred over JSON, no credentials in the query. */
function wantsPage(req: Request): boolean {
  if (CREDENTIAL_PARAMS.some((name) => req.query[name] !== undefined)) return false;
  return req.accepts(['application/json', 'text/html']) === 'text/html';
}

function pageHeaders(res: Response, csp: string): void {
  res.setHeader('Content-Security-Policy', csp);
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('Vary', 'Accept');
}

const escapeAttribute = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/**
 * The console page with the logo origins its CSP allows, in a meta element: the console shows a
 * logo only from those, so an app pushed after the page loaded gets a placeholder, not a CSP violation.
 */
function consolePage(html: string, logoOrigins: string[]): string {
  const meta = `<meta name="pds-logo-origins" content="${escapeAttribute(logoOrigins.join(' '))}" />`;
  return html.replace('</head>', `${meta}</head>`);
}

/** Hashed, immutable build assets under /assets, with the console's CSP (route-scoped, not helmet's global one). */
function assets(dist: string, csp: string): Router {
  const router = Router();
  const serve = express.static(path.join(dist, 'assets'), { index: false, immutable: true, maxAge: '1y', fallthrough: true });
  router.use(
    '/assets',
    (_req, res, next) => {
      res.setHeader('Content-Security-Policy', csp);
      next();
    },
    serve,
  );
  return router;
}

export function consoleBuilt(dist: string): boolean {
  return existsSync(path.join(dist, 'index.html')) && existsSync(path.join(dist, 'signup.html'));
}

/** The bare cluster domain (before tenancy, which would answer 404 there): the sign-up page and its assets. */
export function clusterConsole(options: ConsoleOptions): RequestHandler {
  const csp = consoleCsp({});
  const router = Router();
  router.get('/', (req, res, next) => {
    if (!wantsPage(req)) return next();
    pageHeaders(res, csp);
    res.sendFile(path.join(options.dist, 'signup.html'));
  });
  router.use(assets(options.dist, csp));
  return (req, res, next) => (requestHost(req) === options.clusterDomain ? router(req, res, next) : next());
}

/** An instance address (after tenancy): the console page and its assets. */
export function instanceConsole(options: ConsoleOptions): Router {
  const base: CspSources = { blobOrigin: options.blobOrigin };
  const router = Router();
  router.get('/', async (req, res, next) => {
    if (!wantsPage(req)) return next();
    const logoOrigins = [...new Set(await options.logoOrigins(tenantOf(req).instance.id))];
    pageHeaders(res, consoleCsp({ ...base, logoOrigins }));
    // Read per request (a small file): a rebuilt console is served without restarting the gateway.
    const html = await readFile(path.join(options.dist, 'index.html'), 'utf8');
    res.type('html').send(consolePage(html, logoOrigins));
  });
  router.use(assets(options.dist, consoleCsp(base)));
  return router;
}
