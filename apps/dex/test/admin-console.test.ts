// Dex's administrators' console API (issue 36): an administrator's console password or owner token opens a
// session cookie; anyone else (no credentials, a forged cookie, another owner's token, an app's token) is refused;
// clusters, instances with their keys' fingerprints, apps with their versions; an update pushed to
// selected instances with a dry run first, each instance's progress (one refusing, its reason shown) and
// a retry that delivers it; the audit of every action with the administrator who did it.
import request from 'supertest';
import { hashPassword } from '@pds/tokens';
import { ADMIN, eventually, PEER_CLUSTER, startTestCluster, type TestCluster } from '../../../test/support/dex';
import { signUp, type SignedUp } from '../../../test/support/gateway';

let c: TestCluster;
let admin: SignedUp;
const peers = ['p1', 'p2', 'p3'].map((n) => `${n}.${PEER_CLUSTER}`);
const [p1, , p3] = peers as [string, string, string];
let cookie: string;
const ORIGIN = 'http://dex.test';

beforeAll(async () => {
  c = await startTestCluster();
  admin = await signUp(c.gw.app, ADMIN.split('.')[0] as string);
  for (const address of peers) {
    await c.fakes.add(address);
    await request(c.dexUrl).post('/api/users/registerHat').send({ hatAddress: address }).expect(200);
  }
  await eventually(async () => (await c.dexDb.registeredInstance.findUnique({ where: { address: ADMIN } }))?.state === 'registered');
  await c.startWorker();
}, 120_000);
afterAll(() => c.close());

const record = (title = 'Notes') => ({
  id: 'notes',
  title,
  namespace: 'notes',
  description: 'Keeps notes',
  logoUrl: 'https://notes.example/logo.png',
  url: 'https://notes.example',
  authUrl: '/auth',
  browser: false,
  category: 'app',
  setup: true,
  loginAvailable: true,
});

const get = (path: string) => request(c.dexUrl).get(path).set('Host', 'dex.test').set('Cookie', cookie);
const post = (path: string) => request(c.dexUrl).post(path).set('Host', 'dex.test').set('Origin', ORIGIN).set('Cookie', cookie);

describe('log-in', () => {
  it("opens a session for an administrator's owner token only", async () => {
    await request(c.dexUrl)
      .post('/api/admin/session')
      .send({ token: c.fakes.ownerToken(p1) })
      .expect(403);
    await request(c.dexUrl).post('/api/admin/session').send({ token: 'not-a-token' }).expect(401);
    await request(c.dexUrl).get('/api/admin/clusters').expect(401);
    await request(c.dexUrl).get('/api/admin/clusters').set('X-Auth-Token', c.fakes.ownerToken(p1)).expect(403);
    const res = await request(c.dexUrl).post('/api/admin/session').set('Host', 'dex.test').send({ token: admin.token }).expect(200);
    expect(res.body).toEqual({ actor: ADMIN, expiresAt: expect.any(String) });
    const header = (res.headers['set-cookie'] as unknown as string[])[0]!;
    expect(header).toMatch(/^pds_dex_admin=[\w-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/);
    cookie = header.split(';')[0]!;
    expect((await get('/api/admin/session').expect(200)).body).toEqual({ actor: ADMIN });
  });

  it("opens a session for an administrator's address and console password; anything else is refused alike", async () => {
    const PASSWORD = 'a lighthouse on a calm night';
    const logIn = (address: string, password: string) =>
      request(c.dexUrl).post('/api/admin/session').set('Host', 'dex.test').send({ address, password });
    // No console password set yet: as refused as a wrong one.
    expect((await logIn(ADMIN, PASSWORD).expect(401)).body.message).toBe('Wrong address or password');
    await c.dexDb.admin.update({ where: { address: ADMIN }, data: { passwordHash: await hashPassword(PASSWORD) } });
    expect((await logIn(ADMIN, 'not the password at all').expect(401)).body.message).toBe('Wrong address or password');
    expect((await logIn(p1, PASSWORD).expect(401)).body.message).toBe('Wrong address or password');
    const res = await logIn(ADMIN, PASSWORD).expect(200);
    expect(res.body).toEqual({ actor: ADMIN, expiresAt: expect.any(String) });
    const session = (res.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0]!;
    expect((await request(c.dexUrl).get('/api/admin/session').set('Cookie', session).expect(200)).body).toEqual({ actor: ADMIN });
  });

  it("refuses every console call without a session or an administrator's owner token", async () => {
    const calls = c.dex.routes.filter((r) => r.access === 'console');
    expect(calls.length).toBeGreaterThan(8);
    // An administrator instance's app and user tokens are not its owner's.
    await c.dexDb.admin.create({ data: { address: peers[1]! } });
    const refusals: [Record<string, string>, number][] = [
      [{}, 401],
      [{ Cookie: 'pds_dex_admin=forged' }, 401],
      [{ 'X-Auth-Token': 'not-a-token' }, 401],
      [{ 'X-Auth-Token': c.fakes.ownerToken(p1) }, 403],
      [{ 'X-Auth-Token': c.fakes.ownerToken(peers[1]!, 'application') }, 403],
      [{ 'X-Auth-Token': c.fakes.ownerToken(peers[1]!, 'user') }, 403],
    ];
    try {
      for (const r of calls) {
        const path = String(r.path)
          .replace(':appId', 'notes')
          .replace(':version', '1')
          .replace(':id', '00000000-0000-4000-8000-000000000000');
        for (const [headers, status] of refusals) {
          const res = await request(c.dexUrl)[r.method as 'get'](path).set('Host', 'dex.test').set('Origin', ORIGIN).set(headers);
          expect([r.method, r.path, headers, res.status]).toEqual([r.method, r.path, headers, status]);
        }
      }
    } finally {
      await c.dexDb.admin.delete({ where: { address: peers[1]! } });
    }
  });

  it('refuses a change sent with the cookie from another origin', async () => {
    const res = await request(c.dexUrl)
      .post('/api/admin/apps/notes/push')
      .set('Host', 'dex.test')
      .set('Origin', 'http://evil.test')
      .set('Cookie', cookie)
      .send({ cluster: PEER_CLUSTER, record: record() });
    expect(res.status).toBe(403);
    expect(await c.dexDb.appRecord.count()).toBe(0);
  });
});

describe('the page', () => {
  it('serves the console at / and its assets, under a policy that allows its own scripts and styles only', async () => {
    const page = await request(c.dexUrl).get('/').expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).toContain("connect-src 'self';");
    expect(page.text).toContain('<title>Dex console</title>');
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(page.text)?.[1];
    expect(script).toBeDefined();
    const asset = await request(c.dexUrl).get(script!).expect(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);
    expect(asset.headers['content-security-policy']).toBe(page.headers['content-security-policy']);
    await request(c.dexUrl).get('/assets/nothing-here.js').expect(404);
  });
});

describe('what dex holds', () => {
  it('lists the certified clusters and the instances with their fingerprints', async () => {
    expect((await get('/api/admin/clusters').expect(200)).body.clusters).toEqual(expect.arrayContaining([PEER_CLUSTER]));
    const { instances } = (await get('/api/admin/instances').expect(200)).body;
    const stored = await c.dexDb.registeredInstance.findUnique({ where: { address: p1 } });
    expect(instances).toContainEqual(
      expect.objectContaining({ address: p1, state: 'registered', fingerprint: stored?.fingerprint, cluster: PEER_CLUSTER }),
    );
  });
});

describe('finding instances', () => {
  const addresses = (body: { instances: { address: string }[] }) => body.instances.map((i) => i.address);

  it('pages through them in address order, by cluster, state and part of the address, with how many match', async () => {
    await eventually(
      async () => (await c.dexDb.registeredInstance.count({ where: { clusterDomain: PEER_CLUSTER, state: 'registered' } })) === 3,
    );
    const first = (await get(`/api/admin/instances?cluster=${PEER_CLUSTER}&take=2`).expect(200)).body;
    expect(first).toMatchObject({ total: 3, next: peers[1] });
    expect(addresses(first)).toEqual(peers.slice(0, 2));
    const rest = (await get(`/api/admin/instances?cluster=${PEER_CLUSTER}&take=2&after=${first.next}`).expect(200)).body;
    expect(addresses(rest)).toEqual([p3]);
    expect(rest.next).toBeUndefined();

    expect((await get('/api/admin/instances?find=P3.').expect(200)).body).toMatchObject({ total: 1, instances: [{ address: p3 }] });
    // The find's own wildcards are letters: `p_` is no pattern.
    expect((await get('/api/admin/instances?find=p_').expect(200)).body.total).toBe(0);
    expect((await get(`/api/admin/instances?state=registered&cluster=${PEER_CLUSTER}`).expect(200)).body.total).toBe(3);
    expect((await get('/api/admin/instances?state=retired').expect(200)).body).toMatchObject({ total: 0, instances: [] });
    expect((await get('/api/admin/clusters').expect(200)).body.counts).toContainEqual({
      cluster: PEER_CLUSTER,
      state: 'registered',
      count: 3,
    });
  });

  it.each(['take=0', 'take=501', 'state=lost', `find=${'a'.repeat(254)}`, 'after='])('refuses %s in the error model', async (bad) => {
    const res = await get(`/api/admin/instances?${bad}`).expect(400);
    expect(res.body).toEqual({ error: expect.any(String), message: expect.any(String) });
  });
});

describe('pushing an update', () => {
  it('previews the receivers with a dry run, storing and queueing nothing', async () => {
    const res = await post('/api/admin/apps/notes/push')
      .send({ cluster: PEER_CLUSTER, addresses: [p3, p1], record: record(), dryRun: true })
      .expect(200);
    expect(res.body).toEqual({ targets: [p1, p3] });
    expect(await c.dexDb.appRecord.count()).toBe(0);
    await post('/api/admin/apps/notes/push')
      .send({ cluster: PEER_CLUSTER, addresses: ['nobody.peer.test'], record: record(), dryRun: true })
      .expect(404);
    await post('/api/admin/apps/other/push').send({ cluster: PEER_CLUSTER, record: record(), dryRun: true }).expect(400);
  });

  it('pushes to the chosen instances; one that refuses shows failing with the reason, and a retry delivers it', async () => {
    c.fakes.failWith.set(p3, 503);
    c.fakes.setUp.add(p1);
    const res = await post('/api/admin/apps/notes/push').send({ cluster: PEER_CLUSTER, addresses: peers, record: record() }).expect(200);
    expect(res.body).toEqual({ targets: peers, version: 1 });
    const pushes = await eventually(async () => {
      const list = (await get('/api/admin/apps/notes/versions/1/pushes').expect(200)).body.pushes as {
        address: string;
        state: string;
        lastError?: string;
        id: string;
      }[];
      // p3 waiting out its backoff (not in a second attempt, as a loaded machine may catch it).
      const failing = list.find((p) => p.address === p3);
      return list.filter((p) => p.state === 'delivered').length === 2 && failing?.state === 'retrying' && failing.lastError
        ? list
        : undefined;
    });
    expect(pushes.find((p) => p.address === p1)).toMatchObject({ state: 'delivered', setUp: true });
    expect(pushes.find((p) => p.address === p3)).toMatchObject({ state: 'retrying', lastError: expect.stringContaining('503') });

    c.fakes.failWith.delete(p3);
    const retried = await post(`/api/admin/pushes/${pushes.find((p) => p.address === p3)!.id}/retry`).expect(200);
    expect(retried.body).toMatchObject({ address: p3, retries: 1 });
    await eventually(async () => (await c.dexDb.appPush.findFirst({ where: { address: p3, version: 1 } }))?.state === 'delivered');
    expect(c.fakes.pushes.get(p3)?.length).toBe(1);
    await post(`/api/admin/pushes/${retried.body.id}/retry`).expect(409);
  });

  it('pushes to the instances that have the app set up, and keeps each version', async () => {
    const res = await post('/api/admin/apps/notes/push')
      .send({ cluster: PEER_CLUSTER, setUp: true, record: record('Notes 2') })
      .expect(200);
    expect(res.body).toEqual({ targets: [p1], version: 2 });
    const versions = (await get('/api/admin/apps/notes').expect(200)).body.versions;
    expect(versions.map((v: { version: number; createdBy: string }) => [v.version, v.createdBy])).toEqual([
      [2, ADMIN],
      [1, ADMIN],
    ]);
    expect((await get('/api/admin/apps').expect(200)).body.apps).toEqual([expect.objectContaining({ appId: 'notes', version: 2 })]);
  });
});

describe('the audit', () => {
  it('records each action with the administrator, and exports it as JSON lines', async () => {
    const { entries } = (await get('/api/admin/audit').expect(200)).body;
    expect(entries.map((e: { action: string; status: number }) => [e.action, e.status])).toEqual([
      ['app.push', 200],
      ['push.retry', 409],
      ['push.retry', 200],
      ['app.push', 200],
      ['app.push', 400],
      ['app.push', 404],
      ['app.push', 200],
      ['session.create', 200],
      ['session.create', 401],
      ['session.create', 401],
      ['session.create', 401],
      ['session.create', 200],
      ['session.create', 401],
      ['session.create', 403],
    ]);
    // A refused password names the address it was tried for; a refused token no one.
    expect(
      entries
        .filter((e: { action: string }) => e.action === 'session.create')
        .map((e: { actor: string; details: unknown; status: number }) => [e.actor, e.details, e.status]),
    ).toEqual([
      [ADMIN, { method: 'password' }, 200],
      [p1, { method: 'password' }, 401],
      [ADMIN, { method: 'password' }, 401],
      [ADMIN, { method: 'password' }, 401],
      [ADMIN, { method: 'owner-token' }, 200],
      ['unknown', { method: 'owner-token' }, 401],
      [p1, { method: 'owner-token' }, 403],
    ]);
    expect(entries[6]).toMatchObject({ actor: ADMIN, target: 'notes', details: { dryRun: true, addresses: [p3, p1] } });
    const exported = await get('/api/admin/audit/export').expect(200);
    expect(exported.text.trimEnd().split('\n')).toHaveLength(entries.length);
    expect(exported.text).not.toContain(admin.token);
  });
});
