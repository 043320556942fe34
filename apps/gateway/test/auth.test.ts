import { createHmac, generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { addUser, signUp, type SignedUp } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { issueToken } from '@pds/tokens';
import { tenantAt } from './callers';

const { gw, owners } = useGateway({ owners: ['alice', 'bob'] });
const { alice, bob } = owners;

const NOT_AUTHENTICATED = { error: 'Not Authenticated', message: 'Not Authenticated' };
const on = (who: SignedUp) => ({
  get: (path: string) => request(gw.app).get(path).set('Host', who.address),
});

function b64url(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

describe('login: GET /users/access_token and /user/access_token', () => {
  it.each(['/users/access_token', '/user/access_token'])('%s issues a token with the password header', async (path) => {
    const res = await on(alice).get(path).set('username', 'alice').set('password', alice.password);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ accessToken: expect.any(String), userId: alice.userId });
    expect(res.headers['x-auth-token']).toBe(res.body.accessToken);
  });

  it.each(['/users/access_token', '/user/access_token'])('%s accepts the pass header and URL-encoded values', async (path) => {
    const res = await on(alice).get(path).set('username', 'alice').set('pass', encodeURIComponent(alice.password));
    expect(res.status).toBe(200);
    expect(res.body.userId).toBe(alice.userId);
  });

  it('says credentials are required when a header is missing', async () => {
    const res = await on(alice).get('/users/access_token').set('username', 'alice');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: 'Not Authenticated', message: 'Credentials required' });
  });

  it('answers unknown user and wrong password identically', async () => {
    const unknown = await on(alice).get('/users/access_token').set('username', 'nobody').set('password', alice.password);
    const wrong = await on(alice).get('/users/access_token').set('username', 'alice').set('password', 'wrong-password-entirely');
    expect(unknown.status).toBe(401);
    expect(wrong.status).toBe(401);
    expect(unknown.body).toEqual(NOT_AUTHENTICATED);
    expect(wrong.body).toEqual(NOT_AUTHENTICATED);
  });

  it("does not accept one instance's password on another instance", async () => {
    const res = await on(bob).get('/users/access_token').set('username', 'alice').set('password', alice.password);
    expect(res.status).toBe(401);
  });
});

describe('GET / (instance root)', () => {
  it('exchanges access_token for the token body', async () => {
    const res = await on(alice).get(`/?access_token=${alice.token}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ accessToken: alice.token, userId: alice.userId });
  });

  it.each(['pass', 'password'])('logs in with username and %s', async (field) => {
    const res = await on(alice).get(`/?username=alice&${field}=${encodeURIComponent(alice.password)}`);
    expect(res.status).toBe(200);
    expect(res.body.userId).toBe(alice.userId);
  });

  it('describes the instance without credentials', async () => {
    const res = await on(alice).get('/');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ instance: 'alice.pds.test', apiVersion: 'v2.6', publicKey: '/publickey' });
  });

  it('refuses a bad access_token', async () => {
    const res = await on(alice).get(`/?access_token=${bob.token}`);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(NOT_AUTHENTICATED);
  });
});

describe('GET /publickey', () => {
  it('serves a PEM public key that verifies the tokens the instance issues', async () => {
    const res = await on(alice).get('/publickey');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    const claims = jwt.verify(alice.token, res.text, { algorithms: ['RS256'] }) as jwt.JwtPayload;
    expect(claims).toMatchObject({ iss: 'alice.pds.test', sub: alice.userId, accessScope: 'owner' });
    expect(claims.exp! - claims.iat!).toBe(3 * 24 * 3600);
    expect(jwt.decode(alice.token, { complete: true })?.header.kid).toEqual(expect.any(String));
  });

  it('differs between instances', async () => {
    const a = await on(alice).get('/publickey');
    const b = await on(bob).get('/publickey');
    expect(a.text).not.toBe(b.text);
  });
});

describe('token refusals', () => {
  const tamper = (token: string) => {
    const [h, p, s] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    return [h, b64url({ ...claims, accessScope: 'owner', sub: bob.userId }), s].join('.');
  };
  const cases: [string, () => string | Promise<string>, string][] = [
    [
      'an expired token',
      async () => {
        const res = await on(alice).get('/users/access_token').set('username', 'alice').set('password', alice.password);
        gw.clock.advance(3 * 24 * 3600 + 1);
        return res.body.accessToken;
      },
      'expired',
    ],
    ['a tampered token', () => tamper(alice.token), 'bad signature'],
    [
      'an unsigned token (alg none)',
      () => {
        const claims = jwt.decode(alice.token) as object;
        return `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims)}.`;
      },
      'bad signature',
    ],
    [
      'an HS256 token keyed with the public key',
      async () => {
        const pem = (await on(alice).get('/publickey')).text;
        const claims = jwt.decode(alice.token) as object;
        const head = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url(claims)}`;
        return `${head}.${createHmac('sha256', pem).update(head).digest('base64url')}`;
      },
      'bad signature',
    ],
    [
      'a token signed by a foreign key',
      () => {
        const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
        const claims = jwt.decode(alice.token) as object;
        return jwt.sign(claims, privateKey, { algorithm: 'RS256' });
      },
      'bad signature',
    ],
    ["another instance's token", () => bob.token, 'wrong instance'],
    [
      // Only an app account's token may name an app: signed with the instance's own key, it is still refused.
      "an owner's token that names an app",
      async () => {
        const tenant = await tenantAt(gw, alice.address);
        const keys = await gw.registry.signingKeys(tenant);
        const claims = { issuer: alice.address, subject: alice.userId, accessScope: 'owner' as const, application: 'notes' };
        return issueToken(keys, claims, Math.floor(gw.clock().getTime() / 1000)).token;
      },
      'unknown user',
    ],
    ['garbage', () => 'not.a.token', 'malformed'],
  ];

  afterEach(() => gw.clock.set(new Date()));

  it.each(cases)('validate refuses %s with its cause', async (_name, make, cause) => {
    const token = await make();
    const res = await on(alice).get('/users/access_token/validate').set('X-Auth-Token', token);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Not Authenticated', message: 'The supplied authentication is invalid', cause });
  });

  it.each(cases)('a protected call refuses %s as Not Authenticated', async (_name, make) => {
    const token = await make();
    const res = await on(alice).get('/users/user').set('X-Auth-Token', token);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(NOT_AUTHENTICATED);
  });

  it('validate accepts a valid token, from the header or the query', async () => {
    const header = await on(alice).get('/users/access_token/validate').set('X-Auth-Token', alice.token);
    const query = await on(alice).get(`/users/access_token/validate?X-Auth-Token=${alice.token}`);
    expect(header.status).toBe(200);
    expect(header.body).toEqual({ message: 'Authenticated' });
    expect(query.status).toBe(200);
  });

  it('validate without a token is refused', async () => {
    const res = await on(alice).get('/users/access_token/validate');
    expect(res.status).toBe(401);
    expect(res.body.message).toBe('The supplied authentication is invalid');
  });

  it('refuses the token of a deleted user as unknown user', async () => {
    const carol = await addUser(gw.app, alice, 'carol');
    await request(gw.app).delete(`/users/user/${carol.userId}`).set('Host', alice.address).set('X-Auth-Token', alice.token).expect(200);
    const res = await on(alice).get('/users/access_token/validate').set('X-Auth-Token', carol.token);
    expect(res.status).toBe(401);
    expect(res.body.cause).toBe('unknown user');
  });
});

describe('tenant isolation', () => {
  it("refuses alice's token on bob's host", async () => {
    const res = await on(bob).get('/users/user').set('X-Auth-Token', alice.token);
    expect(res.status).toBe(401);
  });

  it('ignores X-Forwarded-Host unless TRUST_PROXY is on', async () => {
    const res = await on(bob).get('/users/user').set('X-Forwarded-Host', alice.address).set('X-Auth-Token', alice.token);
    expect(res.status).toBe(401);
  });

  it('resolves the host case-insensitively and without the port', async () => {
    const res = await request(gw.app).get('/users/user').set('Host', 'ALICE.pds.test:8443').set('X-Auth-Token', alice.token);
    expect(res.status).toBe(200);
  });

  it('answers 404 for an unknown host before anything else', async () => {
    const res = await request(gw.app).get('/users/access_token').set('Host', 'nobody.pds.test').set('username', 'x').set('password', 'y');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Not Found', message: 'There is no instance at nobody.pds.test' });
  });
});

describe('sliding session', () => {
  afterEach(() => gw.clock.set(new Date()));

  it('sends no new token within the first hour', async () => {
    const res = await on(alice).get('/users/user').set('X-Auth-Token', alice.token);
    expect(res.status).toBe(200);
    expect(res.headers['x-auth-token']).toBeUndefined();
  });

  it('sends a fresh token after an hour that continues the same session', async () => {
    const login = await on(alice).get('/users/access_token').set('username', 'alice').set('password', alice.password);
    const first = jwt.decode(login.body.accessToken) as jwt.JwtPayload;
    gw.clock.advance(2 * 3600);
    const res = await on(alice).get('/users/user').set('X-Auth-Token', login.body.accessToken);
    expect(res.status).toBe(200);
    const fresh = jwt.decode(res.headers['x-auth-token'] as string) as jwt.JwtPayload;
    expect(fresh.iat).toBe(first.iat! + 2 * 3600);
    expect(fresh.auth_time).toBe(first.auth_time);
    expect(fresh.sub).toBe(alice.userId);
  });

  it('never extends a session past 30 days after login', async () => {
    const login = await on(alice).get('/users/access_token').set('username', 'alice').set('password', alice.password);
    let token = login.body.accessToken as string;
    for (let day = 2; day <= 28; day += 2) {
      gw.clock.advance(2 * 24 * 3600);
      const res = await on(alice).get('/users/access_token/validate').set('X-Auth-Token', token);
      expect(res.body).toEqual({ message: 'Authenticated' });
      const refreshed = await on(alice).get('/users/user').set('X-Auth-Token', token);
      token = (refreshed.headers['x-auth-token'] as string) ?? token;
    }
    expect((jwt.decode(token) as jwt.JwtPayload).exp).toBeLessThanOrEqual(
      (jwt.decode(login.body.accessToken) as jwt.JwtPayload).auth_time + 30 * 24 * 3600,
    );
    gw.clock.advance(2 * 24 * 3600);
    const res = await on(alice).get('/users/access_token/validate').set('X-Auth-Token', token);
    expect(res.status).toBe(401);
    expect(res.body.cause).toBe('expired');
  });
});

describe('login rate limit', () => {
  const { gw: limitedGw } = useGateway({ env: { LOGIN_RATE_LIMIT: '10', LOGIN_RATE_WINDOW: '60' } });

  it('answers 429 with Retry-After after 10 attempts a minute per client and instance', async () => {
    const dave = await signUp(limitedGw.app, 'dave');
    const erin = await signUp(limitedGw.app, 'erin');
    const on = (who: SignedUp) => ({ get: (path: string) => request(limitedGw.app).get(path).set('Host', who.address) });
    for (let i = 0; i < 10; i++) {
      const res = await on(dave).get('/users/access_token').set('username', 'dave').set('password', 'wrong-password-entirely');
      expect(res.status).toBe(401);
    }
    const limited = await on(dave).get('/users/access_token').set('username', 'dave').set('password', dave.password);
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('Too Many Requests');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another instance is counted apart.
    const other = await on(erin).get('/users/access_token').set('username', 'erin').set('password', erin.password);
    expect(other.status).toBe(200);
  });
});

describe('responses', () => {
  it('carry helmet headers and a request id, echoing a given one', async () => {
    const res = await on(alice).get('/').set('X-Request-Id', 'req-123');
    expect(res.headers['x-request-id']).toBe('req-123');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-powered-by']).toBeUndefined();
    const generated = await on(alice).get('/');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answer unknown routes with a JSON 404', async () => {
    const res = await request(gw.app).post('/nowhere').set('Host', alice.address);
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('Not Found');
  });
});
