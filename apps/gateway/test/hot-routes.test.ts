// The hot lane (src/hot-routes.ts) answers its plain successful GETs as express would, header for
// header, and hands every other request to express. Who answered is seen by counting the requests
// that reach the app's express router; what express would answer comes from express's own handle.
import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import request from 'supertest';
import { verifyToken } from '@pds/tokens';
import { signUp, startTestGateway, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { FILES, getBytes, uploadFile } from './files-support';

type Handle = (req: IncomingMessage, res: ServerResponse) => void;

let gw: TestGateway;
let alice: SignedUp;
let fileId: string;
let reachedExpress: string[];
/** The gateway's express app without the lane in front. */
const expressOnly: Handle = (req, res) => (express.application as unknown as { handle: Handle }).handle.call(gw.app, req, res);

beforeAll(async () => {
  gw = await startTestGateway();
  alice = await signUp(gw.app, 'alice');
  fileId = (await uploadFile(gw, alice, { name: 'notes.txt', source: 'test', tags: ['a'] })).fileId;
  const router = (gw.app as unknown as { router: { handle: (req: IncomingMessage, ...rest: unknown[]) => void } }).router;
  const handle = router.handle.bind(router);
  router.handle = (req, ...rest) => {
    reachedExpress.push(req.url as string);
    handle(req, ...rest);
  };
});
beforeEach(() => {
  reachedExpress = [];
});
afterAll(() => gw.close());

type Call = (app: Parameters<typeof request>[0]) => request.Test;

/** Signed addresses expire a set time after they are made, to the millisecond: the same but for that. */
const unsigned = <T extends string | undefined>(text: T): T => text?.replace(/\/blobs\/[\w.-]+/g, '/blobs/SIGNED') as T;

/** Status, headers (less the date and the request id, which differ per request) and body. */
async function answer(app: Parameters<typeof request>[0], call: Call) {
  const res = await call(app);
  const { date: _date, 'x-request-id': requestId, location, ...headers } = res.headers as Record<string, string>;
  expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
  return { status: res.status, headers: { ...headers, location: unsigned(location) }, text: unsigned(res.text), signed: location };
}

/** The answer through the lane, after checking it is express's answer to the same request. */
async function sameAsExpress(call: Call) {
  const { signed: _signed, ...want } = await answer(expressOnly, call);
  reachedExpress = [];
  const { signed, ...got } = await answer(gw.app, call);
  expect(got).toEqual(want);
  return { ...got, signed };
}

const asAlice = (path: string) => (app: Parameters<typeof request>[0]) =>
  request(app).get(path).set('Host', alice.address).set('X-Auth-Token', alice.token);

describe('answered by the lane, as express answers', () => {
  it.each([
    ['token validation', '/users/access_token/validate', 200],
    ['the public key', '/publickey', 200],
    ['file metadata', `${FILES}/file/FILE`, 200],
    ['the content redirect', `${FILES}/content/FILE`, 303],
  ])('%s', async (_name, path, status) => {
    const got = await sameAsExpress(asAlice(path.replace('FILE', fileId)));
    expect(got.status).toBe(status);
    expect(reachedExpress).toEqual([]);
  });

  it('file metadata with its fields and the security headers', async () => {
    const got = await sameAsExpress(asAlice(`${FILES}/file/${fileId}`));
    expect(JSON.parse(got.text)).toMatchObject({ fileId, name: 'notes.txt', status: { status: 'Completed' } });
    expect(got.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'x-content-type-options': 'nosniff',
      'strict-transport-security': expect.any(String),
    });
  });

  it('the content of a public file to an anonymous caller', async () => {
    expect(
      (await request(gw.app).get(`${FILES}/allowAccessPublic/${fileId}`).set('Host', alice.address).set('X-Auth-Token', alice.token))
        .status,
    ).toBe(200);
    const got = await sameAsExpress((app) => request(app).get(`${FILES}/content/${fileId}`).set('Host', alice.address));
    expect(got.status).toBe(303);
    expect(reachedExpress).toEqual([]);
    expect(await getBytes(gw, got.signed as string)).toEqual({ status: 200, body: Buffer.from('hello') });
  });

  it('a session over an hour old gets its fresh token, as from express', async () => {
    gw.clock.advance(2 * 3600);
    try {
      const res = await request(gw.app).get(`${FILES}/file/${fileId}`).set('Host', alice.address).set('X-Auth-Token', alice.token);
      expect(res.status).toBe(200);
      expect(reachedExpress).toEqual([]);
      const fresh = res.headers['x-auth-token'] as string;
      const tenant = await gw.registry.resolve(alice.address);
      const claims = verifyToken(fresh, tenant!.keys.publicKey, alice.address, Math.floor(gw.clock().getTime() / 1000));
      expect(claims.sub).toBe(alice.userId);
      const viaExpress = await request(expressOnly)
        .get(`${FILES}/file/${fileId}`)
        .set('Host', alice.address)
        .set('X-Auth-Token', alice.token);
      expect(viaExpress.headers['x-auth-token']).toEqual(expect.any(String));
    } finally {
      gw.clock.advance(-2 * 3600);
    }
  });
});

describe('handed to express', () => {
  const file = () => `${FILES}/file/${fileId}`;
  it.each<[string, () => Call]>([
    ['a refused token', () => (app) => request(app).get(file()).set('Host', alice.address).set('X-Auth-Token', 'not-a-token')],
    [
      'a refused token on validate',
      () => (app) => request(app).get('/users/access_token/validate').set('Host', alice.address).set('X-Auth-Token', 'x.y.z'),
    ],
    ['no token where one is needed', () => (app) => request(app).get(file()).set('Host', alice.address)],
    ['validate without a token', () => (app) => request(app).get('/users/access_token/validate').set('Host', alice.address)],
    ['a missing file', () => asAlice(`${FILES}/file/no-such-file`)],
    [
      'an unknown instance',
      () => (app) =>
        request(app)
          .get('/publickey')
          .set('Host', `nobody.${alice.address.split('.').slice(1).join('.')}`),
    ],
    ['a browser on another origin (CORS)', () => (app) => asAlice(file())(app).set('Origin', 'https://app.example')],
    ['a query string', () => (app) => request(app).get(`${file()}?X-Auth-Token=${alice.token}`).set('Host', alice.address)],
    ['a percent-encoded id', () => asAlice(`${FILES}/file/${fileId.slice(0, 1)}%${fileId.charCodeAt(1).toString(16)}${fileId.slice(2)}`)],
    ['a trailing slash', () => asAlice(`${file()}/`)],
    ['another letter case', () => asAlice(file().toUpperCase())],
    ['a conditional request', () => (app) => asAlice(file())(app).set('If-None-Match', '"x"')],
    ['a forwarded host', () => (app) => asAlice(file())(app).set('X-Forwarded-Host', alice.address)],
    ['a body on a GET', () => (app) => asAlice(file())(app).set('Content-Type', 'application/json').send('{"broken"')],
    ['HEAD', () => (app) => request(app).head('/publickey').set('Host', alice.address)],
  ])('%s', async (_name, call) => {
    await sameAsExpress(call());
    expect(reachedExpress).toHaveLength(1);
  });
});
