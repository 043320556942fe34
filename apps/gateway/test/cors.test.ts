// CORS for browser apps that run hat-js on their own origins (the original's settings before it dropped
// them): exact origins, X-Auth-Token allowed and exposed, preflight cached, never a wildcard.
import request from 'supertest';
import { loadConfig } from '@pds/config';
import type { TestGateway } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { appRecord, push, pushToken } from './apps-fixtures';

const APP_ORIGIN = 'https://notes.example';
const FOREIGN = 'https://evil.example';

function preflight(gw: TestGateway, host: string, origin: string, path = '/api/v2.6/data/notes/items') {
  return request(gw.app)
    .options(path)
    .set('Host', host)
    .set('Origin', origin)
    .set('Access-Control-Request-Method', 'POST')
    .set('Access-Control-Request-Headers', 'x-auth-token,content-type');
}

describe('CORS by default: the origins of the apps pushed to the instance', () => {
  const { gw, dex, owners } = useGateway({ dex: true, owners: ['alice', 'bob'] });
  const { alice, bob } = owners;
  beforeAll(async () => {
    await push(gw.app, alice.address, pushToken(gw, dex, alice.address), 'notes', {
      version: 1,
      record: appRecord('notes', { authUrl: '/login' }),
    }).expect(200);
  });

  it("answers a preflight from an app's origin: that origin, credentials, X-Auth-Token allowed, cached 3 days", async () => {
    const res = await preflight(gw, alice.address, APP_ORIGIN);
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers['access-control-allow-headers']?.toLowerCase().split(',')).toEqual(
      expect.arrayContaining(['x-auth-token', 'content-type']),
    );
    expect(res.headers['access-control-allow-methods']?.split(',')).toEqual(expect.arrayContaining(['GET', 'POST', 'PUT', 'DELETE']));
    expect(res.headers['access-control-max-age']).toBe(String(3 * 24 * 3600));
    expect(res.headers.vary).toMatch(/Origin/);
  });

  it('answers the real request with the origin and exposes X-Auth-Token, so a browser sees the refreshed token', async () => {
    const res = await request(gw.app)
      .get('/users/access_token/validate')
      .set('Host', alice.address)
      .set('Origin', APP_ORIGIN)
      .set('X-Auth-Token', alice.token);
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers['access-control-expose-headers']?.split(',')).toContain('X-Auth-Token');
  });

  it('answers errors with the CORS headers too, so a browser app can read why it failed', async () => {
    const res = await request(gw.app).get('/api/v2.6/data/notes/items').set('Host', alice.address).set('Origin', APP_ORIGIN);
    expect(res.status).toBe(401);
    expect(res.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
  });

  it("lets a browser app upload to the local store's signed address (the encryption header is allowed)", async () => {
    const res = await request(gw.app)
      .options('/blobs/some-signed-token')
      .set('Host', alice.address)
      .set('Origin', APP_ORIGIN)
      .set('Access-Control-Request-Method', 'PUT')
      .set('Access-Control-Request-Headers', 'x-amz-server-side-encryption,content-type');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    expect(res.headers['access-control-allow-headers']?.toLowerCase().split(',')).toContain('x-amz-server-side-encryption');
  });

  it('gives a foreign origin no CORS headers, on preflight and on the request itself', async () => {
    const pre = await preflight(gw, alice.address, FOREIGN);
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    const res = await request(gw.app)
      .get('/users/access_token/validate')
      .set('Host', alice.address)
      .set('Origin', FOREIGN)
      .set('X-Auth-Token', alice.token);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-expose-headers']).toBeUndefined();
  });

  it("refuses an app's origin on an instance the app was not pushed to", async () => {
    expect((await preflight(gw, bob.address, APP_ORIGIN)).headers['access-control-allow-origin']).toBeUndefined();
  });

  it('never answers with a wildcard, and sends nothing to requests without Origin', async () => {
    const res = await request(gw.app).get('/publickey').set('Host', alice.address);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const withOrigin = await request(gw.app).get('/publickey').set('Host', alice.address).set('Origin', APP_ORIGIN);
    expect(withOrigin.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
  });
});

describe('CORS_ALLOWED_ORIGINS', () => {
  const { gw, owners } = useGateway({ env: { CORS_ALLOWED_ORIGINS: 'https://console.example, http://localhost:3000' }, owners: ['alice'] });
  const { alice } = owners;

  it('allows exactly the configured origins instead of the apps', async () => {
    expect((await preflight(gw, alice.address, 'http://localhost:3000')).headers['access-control-allow-origin']).toBe(
      'http://localhost:3000',
    );
    expect((await preflight(gw, alice.address, 'https://console.example')).headers['access-control-allow-origin']).toBe(
      'https://console.example',
    );
    expect((await preflight(gw, alice.address, 'http://localhost:3001')).headers['access-control-allow-origin']).toBeUndefined();
  });

  it('refuses a wildcard or a URL with a path at start, naming the variable', () => {
    expect(() => loadConfig({ CORS_ALLOWED_ORIGINS: '*' })).toThrow(/CORS_ALLOWED_ORIGINS/);
    expect(() => loadConfig({ CORS_ALLOWED_ORIGINS: 'https://app.example/path' })).toThrow(/CORS_ALLOWED_ORIGINS/);
  });
});
