// Both dispatchers serve the one route table: whatever the fast dispatcher answers (gw.app), express
// alone (gw.express) answers the same, header for header and byte for byte — successes, refusals,
// CORS, forwarded headers and the sliding session alike.
import request from 'supertest';
import { verifyToken } from '@pds/tokens';
import { signUp, startTestGateway, STRONG_PASSWORD } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { FILES, getBytes, uploadFile } from './files-support';

type App = Parameters<typeof request>[0];
type Call = (app: App) => request.Test;

const ORIGIN = 'https://app.example';
// Loopback (supertest) is a trusted proxy here, and one origin may call from a browser.
const { gw, owners, users } = useGateway({
  env: { TRUST_PROXY: 'loopback', CORS_ALLOWED_ORIGINS: ORIGIN },
  owners: ['alice'],
  users: { bob: 'alice' },
});
const { alice } = owners;
const { bob } = users;
let fileId: string;

beforeAll(async () => {
  fileId = (await uploadFile(gw, alice, { name: 'notes.txt', source: 'test', tags: ['a'] })).fileId;
});

/** Signed addresses, tokens and record ids differ per call: the same answer but for those. */
const normalised = (text: string | undefined) =>
  text
    ?.replace(/\/blobs\/[\w.-]+/g, '/blobs/SIGNED')
    .replace(/eyJ[\w-]+\.[\w-]+\.[\w-]+/g, 'TOKEN')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) =>
      id === alice.userId || id === bob.userId ? id : 'UUID',
    );

async function answer(app: App, call: Call) {
  const res = await call(app);
  const { date: _date, 'x-request-id': requestId, location, 'x-auth-token': token, ...headers } = res.headers as Record<string, string>;
  expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
  return {
    status: res.status,
    headers: { ...headers, location: normalised(location), 'x-auth-token': normalised(token) },
    text: normalised(res.text),
    signed: location,
    token,
  };
}

/** The fast dispatcher's answer, after checking that express alone gives the same. */
async function same(call: Call) {
  const { signed: _signed, token: _token, ...viaExpress } = await answer(gw.express, call);
  const { signed, token, ...viaDispatcher } = await answer(gw.app, call);
  expect(viaDispatcher).toEqual(viaExpress);
  return { ...viaDispatcher, signed, token };
}

const as = (who: { token: string }, method: 'get' | 'post' | 'put' | 'delete', path: string) => (app: App) =>
  request(app)[method](path).set('Host', alice.address).set('X-Auth-Token', who.token);
const file = () => `${FILES}/file/${fileId}`;

describe('the same answer from either dispatcher', () => {
  it.each<[string, () => Call, number]>([
    ['token validation', () => as(alice, 'get', '/users/access_token/validate'), 200],
    ['the public key', () => (app) => request(app).get('/publickey').set('Host', alice.address), 200],
    ['the instance root', () => (app) => request(app).get('/').set('Host', alice.address), 200],
    [
      'a log-in',
      () => (app) =>
        request(app).get('/users/access_token').set('Host', alice.address).set('username', 'bob').set('password', STRONG_PASSWORD),
      200,
    ],
    ['file metadata', () => as(alice, 'get', file()), 200],
    ['file metadata for a user it was not shared with', () => as(bob, 'get', file()), 404],
    ['the content redirect', () => as(alice, 'get', `${FILES}/content/${fileId}`), 303],
    ['a search', () => (app) => as(alice, 'post', `${FILES}/search?take=5`)(app).send({ source: 'test' }), 200],
    ['a metadata change', () => (app) => as(alice, 'put', file())(app).send({ name: 'notes.txt', tags: ['a'] }), 200],
    ['a record write', () => (app) => as(alice, 'post', '/api/v2.6/data/notes/items')(app).send({ text: 'hi' }), 201],
    ['a record read', () => as(alice, 'get', '/api/v2.6/data/notes/items?take=10&orderBy=text'), 200],
    ['the list of accounts', () => as(alice, 'get', '/users/user'), 200],
    ['the applications', () => as(alice, 'get', '/api/v2.6/applications'), 200],
    ['the probe', () => (app) => request(app).get('/healthz').set('Host', 'anything.example'), 200],
    ['a refused token', () => (app) => request(app).get(file()).set('Host', alice.address).set('X-Auth-Token', 'not-a-token'), 401],
    [
      'a refused token on validate',
      () => (app) => request(app).get('/users/access_token/validate').set('Host', alice.address).set('X-Auth-Token', 'x.y.z'),
      401,
    ],
    ['no token where one is needed', () => (app) => request(app).get(file()).set('Host', alice.address), 401],
    ['an owner-only call by a user', () => as(bob, 'get', '/users/user'), 403],
    ['a missing file', () => as(alice, 'get', `${FILES}/file/no-such-file`), 404],
    ['an unknown instance', () => (app) => request(app).get('/publickey').set('Host', 'nobody.pds.test'), 404],
    ['an unknown path', () => as(alice, 'get', '/api/v2.6/nothing-here'), 404],
    ['a query parameter that fails its schema', () => as(alice, 'get', '/api/v2.6/data/notes/items?take=-1'), 400],
    ['a path parameter that fails its schema', () => as(alice, 'get', '/api/v2.6/data/no%20spaces/items'), 400],
    ['a path that does not decode', () => as(alice, 'get', `${FILES}/file/%zz`), 400],
    ['a NUL in the path', () => as(alice, 'get', `${FILES}/file/a%00b`), 400],
    [
      'a body that is not JSON',
      () => (app) => as(alice, 'post', `${FILES}/search`)(app).set('Content-Type', 'application/json').send('{"broken"'),
      400,
    ],
    ['a body that fails its schema', () => (app) => as(alice, 'post', `${FILES}/upload`)(app).send({ name: '' }), 400],
    [
      'the token in the query (for links)',
      () => (app) => request(app).get(`${file()}?X-Auth-Token=${alice.token}`).set('Host', alice.address),
      200,
    ],
    [
      'a percent-encoded id',
      () => as(alice, 'get', `${FILES}/file/${fileId.slice(0, 1)}%${fileId.charCodeAt(1).toString(16)}${fileId.slice(2)}`),
      200,
    ],
    ['a trailing slash', () => as(alice, 'get', `${file()}/`), 200],
    ['another letter case', () => as(alice, 'get', file().toUpperCase()), 404],
    ['a browser app on an allowed origin', () => (app) => as(alice, 'get', file())(app).set('Origin', ORIGIN), 200],
    ['a browser app on another origin', () => (app) => as(alice, 'get', file())(app).set('Origin', 'https://evil.example'), 200],
    [
      'a forwarded host from a trusted proxy',
      () => (app) =>
        request(app).get(file()).set('Host', 'proxy.internal').set('X-Forwarded-Host', alice.address).set('X-Auth-Token', alice.token),
      200,
    ],
    ['HEAD', () => (app) => request(app).head('/publickey').set('Host', alice.address), 200],
  ])('%s', async (_name, call, status) => {
    expect((await same(call())).status).toBe(status);
  });

  it('the content of a public file to an anonymous caller, whose bytes then come', async () => {
    expect((await as(alice, 'get', `${FILES}/allowAccessPublic/${fileId}`)(gw.app)).status).toBe(200);
    const got = await same((app) => request(app).get(`${FILES}/content/${fileId}`).set('Host', alice.address));
    expect(got.status).toBe(303);
    expect(await getBytes(gw, got.signed as string)).toEqual({ status: 200, body: Buffer.from('hello') });
  });

  it('a session over an hour old gets its fresh token', async () => {
    gw.clock.advance(2 * 3600);
    try {
      const got = await same(as(alice, 'get', file()));
      const fresh = got.token as string;
      const tenant = await gw.registry.resolve(alice.address);
      const claims = verifyToken(fresh, tenant!.keys.publicKey, alice.address, Math.floor(gw.clock().getTime() / 1000));
      expect(claims.sub).toBe(alice.userId);
    } finally {
      gw.clock.advance(-2 * 3600);
    }
  });
});

describe('forwarded headers', () => {
  it('are ignored from a peer that is not a trusted proxy, by either dispatcher', async () => {
    const direct = await startTestGateway({ TRUST_PROXY: '10.9.9.9' });
    try {
      const owner = await signUp(direct.app, 'carol');
      for (const app of [direct.app, direct.express]) {
        const res = await request(app)
          .get('/users/access_token/validate')
          .set('Host', 'nobody.pds.test')
          .set('X-Forwarded-Host', owner.address)
          .set('X-Auth-Token', owner.token);
        expect(res.status).toBe(404);
      }
    } finally {
      await direct.close();
    }
  });

  it('from a trusted proxy, X-Forwarded-For is the client whose log-ins are counted', async () => {
    const limited = await startTestGateway({ TRUST_PROXY: 'loopback', LOGIN_RATE_LIMIT: '2' });
    try {
      const owner = await signUp(limited.app, 'dave');
      const login = (ip: string) =>
        request(limited.app)
          .get('/users/access_token')
          .set('Host', owner.address)
          .set('X-Forwarded-For', ip)
          .set('username', 'dave')
          .set('password', 'wrong');
      expect([(await login('192.0.2.1')).status, (await login('192.0.2.1')).status, (await login('192.0.2.1')).status]).toEqual([
        401, 401, 429,
      ]);
      // Another client behind the same proxy has its own count.
      expect((await login('192.0.2.2')).status).toBe(401);
    } finally {
      await limited.close();
    }
  });
});
