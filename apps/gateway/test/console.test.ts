// The web console as the gateway serves it: who gets a page and who keeps the JSON, and the
// Content-Security-Policy on every console response.
import request from 'supertest';
import { CLUSTER, signUp, startTestGateway } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { appRecord, installApp } from './apps-fixtures';
import { startFilesGateway } from './files-support';

const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

const { gw, dex: dexKeys, owners } = useGateway({ dex: true, owners: ['alice'] });
const { alice } = owners;

const page = (host: string, path = '/', accept = HTML) => request(gw.app).get(path).set('Host', host).set('Accept', accept);

function cspOf(res: request.Response): Record<string, string> {
  const header = res.headers['content-security-policy'] ?? '';
  return Object.fromEntries(
    header.split(/;\s*/).map((directive: string) => [directive.split(' ')[0], directive.split(' ').slice(1).join(' ')]),
  );
}

/** The script of a page: served from /assets, nothing inline. */
function scriptsOf(html: string): string[] {
  return [...html.matchAll(/<script\b[^>]*>/g)].map((tag) => tag[0]);
}

describe('the instance console', () => {
  it('answers a browser at the instance root with the console page under a strict CSP', async () => {
    const res = await page(alice.address);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers.vary).toMatch(/Accept/);
    expect(res.text).toContain('<div id="root"></div>');
    const csp = cspOf(res);
    expect(csp).toMatchObject({
      'default-src': "'none'",
      'script-src': "'self'",
      'style-src': "'self'",
      'connect-src': "'self'",
      'frame-ancestors': "'none'",
      'base-uri': "'none'",
    });
    const scripts = scriptsOf(res.text);
    expect(scripts.length).toBeGreaterThan(0);
    for (const tag of scripts) expect(tag).toMatch(/src="\/assets\/[^"]+\.js"/);
    expect(res.text).not.toMatch(/<style|style="|https?:\/\//);
  });

  it('keeps the JSON description for API clients and the token answer for credentials in the query', async () => {
    const json = await page(alice.address, '/', 'application/json');
    expect(json.body).toEqual({ instance: alice.address, apiVersion: 'v2.6', publicKey: '/publickey' });
    const any = await page(alice.address, '/', '*/*');
    expect(any.body).toEqual({ instance: alice.address, apiVersion: 'v2.6', publicKey: '/publickey' });
    const withToken = await page(alice.address, `/?access_token=${alice.token}`);
    expect(withToken.status).toBe(200);
    expect(withToken.body).toMatchObject({ userId: alice.userId, accessToken: expect.any(String) });
    const wrong = await page(alice.address, '/?username=alice&pass=wrong-password');
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ error: 'Not Authenticated', message: 'Not Authenticated' });
  });

  it('serves the built assets with the same CSP, and 404 for an unknown one', async () => {
    const html = (await page(alice.address)).text;
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1] ?? '';
    const res = await page(alice.address, script, '*/*');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.headers['cache-control']).toMatch(/immutable/);
    expect(cspOf(res)['default-src']).toBe("'none'");
    const missing = await page(alice.address, '/assets/nothing-here.js', '*/*');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 'Not Found', message: expect.any(String) });
  });

  it('allows the logos of the instance’s own apps as images, and no other origin', async () => {
    const first = await page(alice.address);
    expect(cspOf(first)['img-src']).toBe("'self' blob:");
    expect(first.text).toContain('<meta name="pds-logo-origins" content="" />');
    await installApp(gw, dexKeys, alice, appRecord('notes', { logoUrl: 'https://cdn.notes.example/logo.png' }));
    const served = await page(alice.address);
    const after = cspOf(served);
    expect(after['img-src']).toBe("'self' blob: https://cdn.notes.example");
    // The page tells the console which logo origins it may show.
    expect(served.text).toContain('<meta name="pds-logo-origins" content="https://cdn.notes.example" />');
    expect(after['script-src']).toBe("'self'");
    expect(after['connect-src']).toBe("'self'");
    const bob = await signUp(gw.app, 'bob');
    expect(cspOf(await page(bob.address))['img-src']).toBe("'self' blob:");
  });

  it('answers a browser at an unknown host with a 404 page that loads its assets there, and API clients with JSON', async () => {
    for (const path of ['/', '/some/page']) {
      const res = await page(`nobody.${CLUSTER}`, path);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toContain('No data store here');
      expect(cspOf(res)).toMatchObject({ 'default-src': "'none'", 'script-src': "'self'", 'connect-src': "'self'" });
      const script = /src="(\/assets\/[^"]+\.js)"/.exec(res.text)?.[1] ?? '';
      expect(script).toMatch(/\/assets\/unknown-/);
      expect((await page(`nobody.${CLUSTER}`, script, '*/*')).status).toBe(200);
    }
    for (const [path, accept] of [
      ['/', 'application/json'],
      ['/', '*/*'],
      ['/api/v2.6/files/listing', HTML],
    ] as const) {
      const res = await page(`nobody.${CLUSTER}`, path, accept);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Not Found', message: `There is no instance at nobody.${CLUSTER}` });
    }
    // A page at a known instance's unknown path is no "no data store here".
    const missing = await page(alice.address, '/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toMatch(/^application\/json/);
  });
});

describe('the landing page at every address the start banner prints', () => {
  it('leads to the cluster’s sign-up page from an IP, localhost and a name without an instance', async () => {
    // As pnpm start configures it: the public port is the one it listens on.
    const landing = await startTestGateway({ PUBLIC_PORT: '8080' });
    try {
      const signupUrl = `http://${CLUSTER}:8080/`;
      for (const host of ['127.0.0.1:8080', 'localhost:8080', `nobody.${CLUSTER}:8080`, `deeper.nobody.${CLUSTER}:8080`]) {
        const res = await request(landing.app).get('/').set('Host', host).set('Accept', HTML);
        expect({ host, status: res.status, link: /<a id="signup"[^>]*\shref="([^"]*)"/.exec(res.text)?.[1] }).toEqual({
          host,
          status: 404,
          link: signupUrl,
        });
      }
      const signup = await request(landing.app).get('/').set('Host', `${CLUSTER}:8080`).set('Accept', HTML);
      expect([signup.status, signup.headers['content-type']]).toEqual([200, expect.stringMatching(/^text\/html/)]);
    } finally {
      await landing.close();
    }
  });
});

describe('on the S3 store', () => {
  it('lets the console reach the store’s signed addresses, and nothing else', async () => {
    const s3 = await startFilesGateway('s3');
    try {
      const carol = await signUp(s3.app, 'carol');
      const csp = cspOf(await request(s3.app).get('/').set('Host', carol.address).set('Accept', HTML));
      const store = new URL(s3.config.S3_ENDPOINT ?? '').origin;
      expect(csp['connect-src']).toBe(`'self' ${store}`);
      expect(csp['img-src']).toBe(`'self' blob: ${store}`);
    } finally {
      await s3.close();
    }
  });
});

describe('the cluster domain', () => {
  it('answers a browser with the sign-up page', async () => {
    const res = await page(CLUSTER);
    expect(res.status).toBe(200);
    expect(res.text).toContain('<div id="root"></div>');
    expect(scriptsOf(res.text).join()).toMatch(/\/assets\/signup-[^"]+\.js/);
    expect(cspOf(res)['connect-src']).toBe("'self'");
  });

  it('serves the sign-up page’s assets, and keeps 404 for API clients at its root', async () => {
    const script = /src="(\/assets\/[^"]+\.js)"/.exec((await page(CLUSTER)).text)?.[1] ?? '';
    expect((await page(CLUSTER, script, '*/*')).status).toBe(200);
    const api = await page(CLUSTER, '/', 'application/json');
    expect(api.status).toBe(404);
    expect(api.body.error).toBe('Not Found');
  });
});
