import { createPublicKey } from 'node:crypto';
import request from 'supertest';
import { DEX_ISSUER, verifyServiceToken } from '@pds/tokens';
import { ADMIN, eventually, PEER_CLUSTER, startTestCluster, type TestCluster } from '../../../test/support/dex';
import { signUp, type SignedUp } from '../../../test/support/gateway';
import { tamperAt } from '../../../test/support/tamper';

let c: TestCluster;
let admin: SignedUp;
const peers = ['p1', 'p2', 'p3'].map((n) => `${n}.${PEER_CLUSTER}`);

beforeAll(async () => {
  c = await startTestCluster();
  admin = await signUp(c.gw.app, ADMIN.split('.')[0] as string);
  for (const address of peers) {
    await c.fakes.add(address);
    await request(c.dexUrl).post('/api/users/registerHat').send({ hatAddress: address }).expect(200);
  }
  await eventually(async () => (await c.dexDb.registeredInstance.findUnique({ where: { address: ADMIN } }))?.state === 'registered');
});
afterAll(() => c.close());

const record = (overrides: Record<string, unknown> = {}) => ({
  title: 'Notes',
  namespace: 'notes',
  description: 'Keeps notes',
  logoUrl: 'https://notes.example/logo.png',
  url: 'https://notes.example',
  authUrl: '/auth',
  browser: false,
  category: 'app',
  setup: true,
  loginAvailable: true,
  ...overrides,
});

const update = (query: Record<string, string>, body: unknown, token?: string) => {
  const req = request(c.dexUrl).post('/api/users/update-application').query(query);
  if (token) req.set('x-auth-token', token);
  return req.send(body as object);
};

describe('POST /api/users/update-application', () => {
  it('answers 401 without a token, with a malformed one, or with one of an unknown instance', async () => {
    for (const token of [undefined, 'not-a-jwt', tamperAt(c.fakes.ownerToken(peers[0] as string))]) {
      const res = await update({ hatFilter: '*', cluster: PEER_CLUSTER }, record(), token);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Not Authenticated', message: 'Not Authenticated' });
    }
    await c.fakes.add('stranger.elsewhere.test');
    expect((await update({ hatFilter: '*', cluster: PEER_CLUSTER }, record(), c.fakes.ownerToken('stranger.elsewhere.test'))).status).toBe(
      401,
    );
  });

  it('answers 403 to a registered instance that is not an admin, and to a non-owner of the admin instance', async () => {
    const res = await update({ hatFilter: '*', cluster: PEER_CLUSTER }, record(), c.fakes.ownerToken(peers[0] as string));
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('Forbidden');
    const login = await request(c.gw.app)
      .post('/users/user')
      .set('Host', ADMIN)
      .set('X-Auth-Token', admin.token)
      .send({ username: 'helper', password: admin.password });
    expect(login.status).toBe(201);
    const token = (
      await request(c.gw.app).get('/users/access_token').set('Host', ADMIN).set('username', 'helper').set('password', admin.password)
    ).body.accessToken;
    expect((await update({ hatFilter: '*', cluster: PEER_CLUSTER }, record(), token)).status).toBe(403);
  });

  it('answers 400 naming the field of a bad record or query', async () => {
    const bad = await update({ hatFilter: '*', cluster: PEER_CLUSTER }, record({ category: 'game', url: 'ftp://x' }), admin.token);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('url: ');
    expect(bad.body.message).toContain('category: must be one of');
    expect((await update({ hatFilter: '*' }, record(), admin.token)).body.message).toBe('cluster: is required');
    expect((await update({ cluster: PEER_CLUSTER }, record(), admin.token)).status).toBe(400);
  });

  it('answers 404 for an unknown cluster or instance', async () => {
    const cluster = await update({ hatFilter: '*', cluster: 'unknown.test' }, record(), admin.token);
    expect(cluster.status).toBe(404);
    expect(cluster.body.message).toBe('Unknown cluster unknown.test');
    const instance = await update({ hatFilter: `ghost.${PEER_CLUSTER}`, cluster: PEER_CLUSTER }, record(), admin.token);
    expect(instance.status).toBe(404);
    const wrongCluster = await update({ hatFilter: peers[0] as string, cluster: 'pds.test' }, record(), admin.token);
    expect(wrongCluster.status).toBe(404);
  });

  it('stores a version, queues one push per target and delivers each with a dex-signed token', async () => {
    const res = await update({ hatFilter: '*', cluster: PEER_CLUSTER }, record(), admin.token);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ message: 'Application notes version 1 queued for 3 instance(s)', targets: peers });
    const stored = await c.dexDb.appRecord.findUniqueOrThrow({ where: { appId_version: { appId: 'notes', version: 1 } } });
    expect(stored.createdBy).toBe(ADMIN);
    expect(await c.dexDb.appPush.count({ where: { appId: 'notes', version: 1 } })).toBe(3);

    await eventually(async () => (await c.dexDb.appPush.count({ where: { appId: 'notes', state: 'delivered' } })) === 3);
    const dexKey = createPublicKey((await request(c.dexUrl).get('/publickey')).text);
    for (const address of peers) {
      const pushes = c.fakes.pushes.get(address) as { token: string; body: { version: number; record: { id: string } } }[];
      expect(pushes).toHaveLength(1);
      expect(pushes[0]?.body).toEqual({ version: 1, record: expect.objectContaining({ id: 'notes', title: 'Notes' }) });
      expect(
        verifyServiceToken(
          pushes[0]?.token as string,
          dexKey,
          { issuer: DEX_ISSUER, audience: address, scope: 'app-push' },
          Math.floor(Date.now() / 1000),
        ),
      ).not.toBeNull();
    }

    const single = await update({ hatFilter: peers[1] as string, cluster: PEER_CLUSTER }, record({ title: 'Notes 2' }), admin.token);
    expect(single.status).toBe(202);
    expect(single.body.targets).toEqual([peers[1]]);
    expect(single.body.message).toContain('version 2');
  });

  it("records each call in the administrators' audit, refused ones too, with who made it", async () => {
    const entries = await c.dexDb.auditEntry.findMany({ where: { action: 'application.update' }, orderBy: { id: 'asc' } });
    expect(entries.map((e) => [e.actor, e.target, e.status])).toEqual(
      expect.arrayContaining([
        [peers[0], 'notes', 403],
        [ADMIN, 'notes', 400],
        [ADMIN, 'notes', 202],
      ]),
    );
    expect(entries.find((e) => e.status === 202)?.details).toEqual({ hatFilter: '*', cluster: PEER_CLUSTER });
    // A caller whose token does not verify names no one: nothing is recorded for it.
    expect(entries.every((e) => e.actor !== 'stranger.elsewhere.test')).toBe(true);
  });

  it('delivers to a real gateway, which then lists the app', async () => {
    const res = await update({ hatFilter: ADMIN, cluster: 'pds.test' }, record({ namespace: 'diary', title: 'Diary' }), admin.token);
    expect(res.status).toBe(202);
    await eventually(async () => (await c.dexDb.appPush.findFirst({ where: { appId: 'diary' } }))?.state === 'delivered');
    const list = await request(c.gw.app).get('/api/v2.6/applications').set('Host', ADMIN).set('X-Auth-Token', admin.token);
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).toContain('Diary');
  });
});
