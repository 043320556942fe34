// Serves the web console (apps/console's Vite build) to browsers: the sign-up page on the bare
// cluster domain, the owner's console on instance addresses, and a 404 page at an address where no
// instance lives. API clients keep the JSON answers (CONTRACT §1): only a request that prefers HTML and
// carries no credentials gets a page.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import type { ParsedUrlQuery } from 'node:querystring';
import path from 'node:path';
import accepts from 'accepts';
import express, { Router, type RequestHandler, type Response } from 'express';
import { clientOf, type Reply, type TrustProxy } from '@pds/http';
import type { ResolvedInstance } from '../instances/registry';
import { addressOfHost } from '../instances/tenancy';
import { consoleCsp, type CspSources } from '@pds/http';

export interface ConsoleOptions {
  /** The console's build folder; when it holds no build the console is off and GET / stays JSON. */
  dist: string;
  clusterDomain: string;
  /** The cluster's sign-up page as the public reaches it (`http://pds.localhost:8080/`). */
  signupUrl: string;
  trust: TrustProxy;
  /** Whether an instance lives at an address (the unknown-address page is for the others). */
  instanceExists(address: string): Promise<boolean>;
  blobOrigin?: string;
  /** Origins of the logos of an instance's apps, allowed as images in its console. */
  logoOrigins(instanceId: string): Promise<string[]>;
}

const CREDENTIAL_PARAMS = ['access_token', 'username', 'pass', 'password'];

/** A browser navigation to the page, not an API call: HTML preferred over JSON, no credentials in the query. */
export function wantsPage(req: IncomingMessage, query: ParsedUrlQuery): boolean {
  if (CREDENTIAL_PARAMS.some((name) => query[name] !== undefined)) return false;
  return accepts(req).types(['application/json', 'text/html']) === 'text/html';
}

const pageHeaders = (csp: string) => ({ 'Content-Security-Policy': csp, 'Cache-Control': 'no-cache', Vary: 'Accept' });

const escapeAttribute = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/**
 * The console page with the logo origins its CSP allows, in a meta element: the console shows a
 * logo only from those, so an app pushed after the page loaded gets a placeholder, not a CSP violation.
 */
function consolePage(html: string, logoOrigins: string[]): string {
  const meta = `<meta name="pds-logo-origins" content="${escapeAttribute(logoOrigins.join(' '))}" />`;
  return html.replace('</head>', `${meta}</head>`);
}

/**
 * The unknown-address page with its link to the cluster's sign-up page. Made here, not in the browser:
 * the address the page was asked at may be no name under the cluster (`127.0.0.1:8080`,
 * `localhost:8080`, as the start banner prints the gateway), and one label up from it leads nowhere.
 */
function unknownPage(html: string, signupUrl: string): string {
  return html.replace(/(<a id="signup"[^>]*\shref=")[^"]*(")/, `$1${escapeAttribute(signupUrl)}$2`);
}

export function consoleBuilt(dist: string): boolean {
  return existsSync(path.join(dist, 'index.html')) && existsSync(path.join(dist, 'signup.html'));
}

export class ConsolePages {
  private readonly base: CspSources;

  constructor(private readonly options: ConsoleOptions) {
    this.base = { blobOrigin: options.blobOrigin };
  }

  /** An instance's console page, answered by its GET / when a browser asks for it. */
  async instancePage(tenant: ResolvedInstance): Promise<Reply> {
    const logoOrigins = [...new Set(await this.options.logoOrigins(tenant.instance.id))];
    // Read per request (a small file): a rebuilt console is served without restarting the gateway.
    const html = await readFile(path.join(this.options.dist, 'index.html'), 'utf8');
    return {
      status: 200,
      headers: pageHeaders(consoleCsp({ ...this.base, logoOrigins })),
      text: { type: 'text/html; charset=utf-8', body: consolePage(html, logoOrigins) },
    };
  }

  /**
   * What express serves beside the routes: the hashed, immutable build assets under /assets on every
   * host (the unknown-address page needs them where no instance lives), the sign-up page on the bare
   * cluster domain, and the unknown-address page, with a 404, for a browser's page anywhere else without
   * an instance (the pipeline passes such requests on).
   */
  express(): RequestHandler {
    const router = Router();
    const serve = express.static(path.join(this.options.dist, 'assets'), {
      index: false,
      immutable: true,
      maxAge: '1y',
      fallthrough: true,
    });
    const assetsCsp = consoleCsp(this.base);
    router.use(
      '/assets',
      (_req, res, next) => {
        res.setHeader('Content-Security-Policy', assetsCsp);
        next();
      },
      serve,
    );
    // Pages where no instance lives (sign-up, unknown address): no store, no logos.
    const bareCsp = consoleCsp({});
    router.get('/', (req, res: Response, next) => {
      const host = addressOfHost(clientOf(req, this.options.trust).host);
      if (host !== this.options.clusterDomain || !wantsPage(req, req.query as ParsedUrlQuery)) return next();
      res.set(pageHeaders(bareCsp));
      res.sendFile(path.join(this.options.dist, 'signup.html'));
    });
    router.use(async (req, res: Response, next) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return next();
      const host = addressOfHost(clientOf(req, this.options.trust).host);
      if (host === this.options.clusterDomain || !wantsPage(req, req.query as ParsedUrlQuery)) return next();
      if (host && (await this.options.instanceExists(host))) return next();
      const html = await readFile(path.join(this.options.dist, 'unknown.html'), 'utf8');
      res.status(404).set(pageHeaders(bareCsp)).type('html');
      res.send(unknownPage(html, this.options.signupUrl));
    });
    return router;
  }
}
