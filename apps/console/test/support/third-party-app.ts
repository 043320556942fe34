// A third-party app on its own localhost origin, as an app developer would build it with hat-js:
// its page links to the instance's login with generateHatLoginUrl; its callback receives the app
// token and writes a record with hat-js. It also records every request, so a test can show that no
// token ever reached an origin that did not earn it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HatClient } from '@dataswift/hat-js';

export interface ThirdPartyApp {
  origin: string;
  /** Every path + query this server was asked for. */
  requests: string[];
  /** Tokens that arrived at the callback. */
  tokens: string[];
  /** Sets the instance the page links to and the data the callback writes. */
  configure(options: { instanceUrl: string; appId: string; record: object }): void;
  close(): Promise<void>;
}

/** The app's logo (64×64). */
const LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64"><rect width="64" height="64" rx="12" fill="#e0a100"/>' +
  '<path d="M18 14h22l8 8v28H18z" fill="#fff"/><path d="M24 30h18M24 38h18M24 46h12" stroke="#e0a100" stroke-width="3"/></svg>';

/** hat-js builds addresses from the token's iss (no port): the instance's port is put back here. */
function withPort(fetchImpl: typeof fetch, instanceUrl: string): typeof fetch {
  const instance = new URL(instanceUrl);
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.hostname === instance.hostname) url.port = instance.port;
    return fetchImpl(url, init);
  };
}

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1>${body}</body></html>`;

export async function startThirdPartyApp(): Promise<ThirdPartyApp> {
  const requests: string[] = [];
  const tokens: string[] = [];
  let settings: { instanceUrl: string; appId: string; record: object } | undefined;
  let origin = '';

  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const url = new URL(req.url ?? '/', origin);
    const html = (status: number, text: string) => res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8' }).end(text);
    if (url.pathname === '/logo.svg') return res.writeHead(200, { 'Content-Type': 'image/svg+xml' }).end(LOGO);
    if (url.pathname === '/favicon.ico') return res.writeHead(204).end();
    if (!settings) return html(503, page('Not configured', ''));
    const { instanceUrl, appId, record } = settings;
    if (url.pathname === '/') {
      const hat = new HatClient({});
      const login = hat.auth().generateHatLoginUrl(instanceUrl, appId, `${origin}/callback`, `${origin}/refused`);
      return html(200, page('Notes app', `<a id="login" href="${login}">Log in with your data store</a>`));
    }
    if (url.pathname === '/callback') {
      const token = url.searchParams.get('token') ?? '';
      tokens.push(token);
      const hat = new HatClient({ token, apiVersion: 'v2.6', secure: false });
      const realFetch = globalThis.fetch;
      globalThis.fetch = withPort(realFetch, instanceUrl);
      hat
        .hatData()
        .create(appId, 'items', record)
        .then(
          (saved) =>
            html(200, page('Connected', `<p id="saved">Saved record ${(saved.parsedBody as { recordId?: string })?.recordId ?? ''}</p>`)),
          (error: unknown) => html(500, page('Failed', `<p id="failed">${String((error as Error)?.message ?? error)}</p>`)),
        )
        .finally(() => (globalThis.fetch = realFetch));
      return;
    }
    if (url.pathname === '/refused') return html(200, page('Refused', ''));
    html(404, page('Not found', ''));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    requests,
    tokens,
    configure: (options) => (settings = options),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
