import request from 'supertest';
import { keyFingerprint } from '@pds/tokens';
import { eventually, PEER_CLUSTER, startTestCluster, type TestCluster } from '../../../test/support/dex';
import { signUp } from '../../../test/support/gateway';

let c: TestCluster;
beforeAll(async () => {
  c = await startTestCluster({ registerWaitMs: 2500 });
});
afterAll(() => c.close());

const register = (hatAddress: unknown, path = '/api/users/registerHat') => request(c.dexUrl).post(path).send({ hatAddress });

describe('POST /api/users/registerHat', () => {
  it('registers a signed-up instance with the key its gateway serves', async () => {
    const alice = await signUp(c.gw.app, 'alice');
    const row = await eventually(async () => {
      const r = await c.dexDb.registeredInstance.findUnique({ where: { address: alice.address } });
      return r?.state === 'registered' ? r : null;
    });
    const served = await request(c.gatewayUrl).get('/publickey').set('Host', alice.address).expect(200);
    expect(row.fingerprint).toBe(keyFingerprint(served.text));
    expect(row.clusterDomain).toBe('pds.test');
    await eventually(async () => (await c.gw.db.instance.findUnique({ where: { address: alice.address } }))?.dexState === 'registered');
  });

  it('answers 200 Registered, idempotently, also under /api/v3', async () => {
    await c.fakes.add(`bob.${PEER_CLUSTER}`);
    const first = await register(`bob.${PEER_CLUSTER}`);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ message: 'Registered', hatAddress: `bob.${PEER_CLUSTER}` });
    const again = await register(`BOB.${PEER_CLUSTER}.`, '/api/v3/users/registerHat');
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ message: 'Registered', hatAddress: `bob.${PEER_CLUSTER}` });
    const row = await c.dexDb.registeredInstance.findUniqueOrThrow({ where: { address: `bob.${PEER_CLUSTER}` } });
    expect(row.fingerprint).toBe(c.fakes.keys.get(`bob.${PEER_CLUSTER}`)?.keyId);
    // Each registration really fetched the key again (that is how a key change is noticed).
    expect(c.fakes.requests.filter((r) => r === `GET bob.${PEER_CLUSTER} /publickey`)).toHaveLength(2);
  });

  it.each([
    ['an uncertified domain', 'eve.evil.example', 'is not under a certified cluster domain'],
    ['an IPv4 literal', '127.0.0.1', 'not an IP address'],
    ['a short IPv4 literal', '127.1', 'not an IP address'],
    ['an IPv6 literal', '[::1]', 'must be a domain name'],
    ['localhost', 'localhost', 'must be an instance address'],
    ['a bare cluster domain', PEER_CLUSTER, 'is a cluster domain'],
    ['a host with a port', `mallory.${PEER_CLUSTER}:22`, 'must be a domain name'],
    ['a URL', `http://mallory.${PEER_CLUSTER}/`, 'must be a domain name'],
    ['a deeper name', `a.mallory.${PEER_CLUSTER}`, 'is not under a certified cluster domain'],
    ['a number', 42, 'is required'],
  ])('refuses %s with 400 before anything is fetched', async (_what, hatAddress, rule) => {
    const before = c.fakes.requests.length;
    const res = await register(hatAddress);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Bad Request');
    expect(res.body.message).toContain('hatAddress: ');
    expect(res.body.message).toContain(rule);
    expect(c.fakes.requests.length).toBe(before);
    expect(await c.keyFetch.queue.getJobCounts()).toEqual(expect.objectContaining({ waiting: 0, active: 0, delayed: 0 }));
  });

  it('answers 400 when the address serves no RSA key, and 202 while its instance does not answer', async () => {
    const missing = await register(`nobody.${PEER_CLUSTER}`);
    expect(missing.status).toBe(400);
    expect(missing.body.message).toBe(`hatAddress: nobody.${PEER_CLUSTER} did not serve an RSA public key`);

    await c.fakes.add(`slow.${PEER_CLUSTER}`);
    c.fakes.failWith.set(`slow.${PEER_CLUSTER}`, 503);
    const pending = await register(`slow.${PEER_CLUSTER}`);
    expect(pending.status).toBe(202);
    expect(pending.body).toEqual({ message: 'Registration pending', hatAddress: `slow.${PEER_CLUSTER}` });
    // The fetch keeps retrying in the background and succeeds once the instance answers.
    c.fakes.failWith.delete(`slow.${PEER_CLUSTER}`);
    await eventually(
      async () => (await c.dexDb.registeredInstance.findUnique({ where: { address: `slow.${PEER_CLUSTER}` } }))?.state === 'registered',
      15_000,
    );
  }, 30_000);

  it('answers 409 for a changed key, refuses the instance tokens, and accepts them again after re-certification', async () => {
    const carol = `carol.${PEER_CLUSTER}`;
    await c.fakes.add(carol);
    await register(carol).expect(200);
    const oldToken = c.fakes.ownerToken(carol);
    const updateApp = (token: string) =>
      request(c.dexUrl)
        .post('/api/users/update-application')
        .query({ hatFilter: '*', cluster: PEER_CLUSTER })
        .set('x-auth-token', token)
        .send({});
    // A valid token of a registered non-admin instance gets past authentication (403, not 401).
    expect((await updateApp(oldToken)).status).toBe(403);

    const newKeys = await c.fakes.add(carol);
    const res = await register(carol);
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('Conflict');
    const row = await c.dexDb.registeredInstance.findUniqueOrThrow({ where: { address: carol } });
    expect(row.state).toBe('key_mismatch');
    expect(row.pendingKeyPem).toBe(newKeys.pem);
    expect((await updateApp(oldToken)).status).toBe(401);
    expect((await updateApp(c.fakes.ownerToken(carol))).status).toBe(401);
    expect((await register(carol)).status).toBe(409);

    const { RegisteredInstanceRepository } = await import('@pds/db');
    expect(await new RegisteredInstanceRepository(c.dexDb).recertify(carol, keyFingerprint)).toBe(true);
    expect((await updateApp(c.fakes.ownerToken(carol))).status).toBe(403);
    expect((await updateApp(oldToken)).status).toBe(401);
    expect((await register(carol)).status).toBe(200);
  });

  it("serves dex's own public key", async () => {
    const res = await request(c.dexUrl).get('/publickey').expect(200);
    expect(res.type).toBe('text/plain');
    expect(res.text).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
  });
});
