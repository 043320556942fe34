// The operator console's API on the admin listener (issue 36): operator accounts made with ADMIN_TOKEN,
// log-in into an HttpOnly, SameSite=Strict session cookie (or with ADMIN_TOKEN itself), refused from
// another origin; instances sorted and one instance in full; the cluster's processes, queues, storage and
// dex registrations, with a failed job inspected and retried; and the audit of every action, with its
// actor, listed and exported as JSON lines.
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { UnrecoverableError, Worker } from 'bullmq';
import { announcePresence, jobIds } from '@pds/queue';
import { adminCli } from '../src/admin/cli';
import { callerRequests, signUp, startTestGateway, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { uploadFile } from './files-support';

const TOKEN = randomBytes(32).toString('hex');
const PASSWORD = 'a quiet harbour at dawn';
let gw: TestGateway;
let alice: SignedUp;
let bob: SignedUp;

beforeAll(async () => {
  gw = await startTestGateway({ ADMIN_TOKEN: TOKEN });
  alice = await signUp(gw.app, 'alice');
  gw.clock.advance(60);
  bob = await signUp(gw.app, 'bob');
});
afterAll(() => gw.close());

const admin = () => gw.admin!;
const bearer = () => ({ Authorization: `Bearer ${TOKEN}` });
/** The admin listener's own origin, as a browser on the console sends it. */
const ORIGIN = 'http://admin.test';

async function logIn(body: object): Promise<{ cookie: string; res: request.Response }> {
  const res = await request(admin()).post('/session').set('Host', 'admin.test').send(body);
  const cookie = (res.headers['set-cookie'] as unknown as string[] | undefined)?.[0] ?? '';
  return { cookie: cookie.split(';')[0]!, res };
}

/** Requests as the console sends them: the session cookie, from its own origin. */
const asConsole = (cookie: string) => ({
  get: (path: string) => request(admin()).get(path).set('Host', 'admin.test').set('Cookie', cookie),
  post: (path: string) => request(admin()).post(path).set('Host', 'admin.test').set('Origin', ORIGIN).set('Cookie', cookie),
  put: (path: string) => request(admin()).put(path).set('Host', 'admin.test').set('Origin', ORIGIN).set('Cookie', cookie),
  delete: (path: string) => request(admin()).delete(path).set('Host', 'admin.test').set('Origin', ORIGIN).set('Cookie', cookie),
});

describe('operator accounts and log-in', () => {
  let olivia: string;

  it('adds an operator with ADMIN_TOKEN only, refusing weak passwords, taken and bad names', async () => {
    await request(admin()).post('/operators').set(bearer()).send({ name: 'olivia', password: 'password' }).expect(400);
    await request(admin()).post('/operators').set(bearer()).send({ name: 'Bad Name!', password: PASSWORD }).expect(400);
    await request(admin()).post('/operators').send({ name: 'olivia', password: PASSWORD }).expect(401);
    const added = await request(admin()).post('/operators').set(bearer()).send({ name: 'olivia', password: PASSWORD }).expect(201);
    expect(added.body).toEqual({ name: 'olivia', createdAt: expect.stringMatching(/Z$/) });
    await request(admin()).post('/operators').set(bearer()).send({ name: 'olivia', password: PASSWORD }).expect(409);
    const row = await gw.db.operator.findUnique({ where: { name: 'olivia' } });
    expect(row?.passwordHash).toMatch(/^scrypt\$/);
    expect(row?.passwordHash).not.toContain(PASSWORD);
  });

  it('logs an operator in to an HttpOnly, SameSite=Strict cookie whose token is kept only hashed', async () => {
    const { cookie, res } = await logIn({ name: 'olivia', password: PASSWORD });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ actor: 'operator:olivia', expiresAt: expect.stringMatching(/Z$/) });
    const header = (res.headers['set-cookie'] as unknown as string[])[0]!;
    expect(header).toMatch(/^pds_operator=[\w-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/);
    olivia = cookie;
    const token = cookie.split('=')[1]!;
    const sessions = await gw.db.consoleSession.findMany();
    expect(sessions.map((s) => s.actor)).toEqual(['operator:olivia']);
    expect(sessions[0]!.tokenHash).not.toContain(token);
    expect((await asConsole(olivia).get('/session').expect(200)).body).toEqual({ actor: 'operator:olivia' });
  });

  it('answers a wrong password and an unknown name alike, and counts both as failed log-ins in the audit', async () => {
    const wrong = await logIn({ name: 'olivia', password: 'not the password at all' });
    const unknown = await logIn({ name: 'nobody', password: PASSWORD });
    expect([wrong.res.status, unknown.res.status]).toEqual([401, 401]);
    expect(wrong.res.body).toEqual(unknown.res.body);
    expect(wrong.res.headers['set-cookie']).toBeUndefined();
    const entries = (await request(admin()).get('/audit?action=session.create').set(bearer()).expect(200)).body.entries;
    expect(entries.map((e: { actor: string; status: number }) => [e.actor, e.status])).toEqual([
      ['operator:nobody', 401],
      ['operator:olivia', 401],
      ['operator:olivia', 200],
    ]);
  });

  it('logs in with ADMIN_TOKEN too, as the token', async () => {
    const { res } = await logIn({ adminToken: TOKEN });
    expect(res.body.actor).toBe('admin-token');
    expect((await logIn({ adminToken: TOKEN.slice(1) })).res.status).toBe(401);
  });

  it('refuses a change sent with the cookie from another origin, or none, and changes nothing', async () => {
    for (const origin of ['http://evil.test', undefined]) {
      const req = request(admin()).post(`/instances/${alice.address}/suspend`).set('Host', 'admin.test').set('Cookie', olivia);
      const res = await (origin ? req.set('Origin', origin) : req).send({ reason: 'csrf' }).expect(403);
      expect(res.body.error).toBe('Forbidden');
    }
    expect((await gw.db.instance.findUnique({ where: { address: alice.address } }))?.state).toBe('active');
  });

  it('refuses an operator the accounts (ADMIN_TOKEN only), and anyone without a session or with an instance token', async () => {
    await asConsole(olivia).get('/operators').expect(403);
    await asConsole(olivia).post('/operators').send({ name: 'mallory', password: PASSWORD }).expect(403);
    await request(admin()).get('/instances').set('Cookie', 'pds_operator=forged').expect(401);
    await request(admin()).get('/instances').set('X-Auth-Token', alice.token).expect(401);
    await request(admin()).get('/instances').set('Authorization', `Bearer ${alice.token}`).expect(401);
    expect((await request(admin()).get('/operators').set(bearer()).expect(200)).body.operators).toEqual([
      { name: 'olivia', createdAt: expect.any(String) },
    ]);
  });

  it('logs out: the session ends and the cookie is cleared', async () => {
    const { cookie } = await logIn({ name: 'olivia', password: PASSWORD });
    const out = await asConsole(cookie).delete('/session').expect(200);
    expect((out.headers['set-cookie'] as unknown as string[])[0]).toMatch(/^pds_operator=; .*Max-Age=0/);
    expect((await asConsole(cookie).get('/session').expect(200)).body).toEqual({});
    await asConsole(cookie).get('/instances').expect(401);
  });
});

describe('instances', () => {
  it('sorts them by usage, by last activity, by state and by creation, either way', async () => {
    await uploadFile(gw, { address: bob.address, token: bob.token }, { name: 'big.bin', source: 'test' }, Buffer.alloc(5000, 1));
    const order = async (query: string) =>
      ((await request(admin()).get(`/instances?${query}`).set(bearer()).expect(200)).body.instances as { address: string }[]).map(
        (i) => i.address,
      );
    expect(await order('sort=usage')).toEqual([bob.address, alice.address]);
    expect(await order('sort=usage&order=asc')).toEqual([alice.address, bob.address]);
    expect(await order('sort=created&order=asc')).toEqual([alice.address, bob.address]);
    expect(await order('sort=activity')).toEqual([bob.address, alice.address]);
    await request(admin()).post(`/instances/${alice.address}/suspend`).set(bearer()).send({ reason: 'sorting' }).expect(200);
    expect(await order('sort=state&order=asc')).toEqual([bob.address, alice.address]);
    await request(admin()).post(`/instances/${alice.address}/resume`).set(bearer()).send({ reason: 'sorted' }).expect(200);
    await request(admin()).get('/instances?sort=size').set(bearer()).expect(400);
  });

  it("shows one instance's accounts, apps, latest changes (kinds only) and exports", async () => {
    await callerRequests(gw.app, bob, bob.address).post('/api/v2.6/data/diary/entries').send({ text: 'private words' }).expect(201);
    const res = await request(admin()).get(`/instances/${bob.address}`).set(bearer()).expect(200);
    expect(res.body).toMatchObject({ accounts: { owner: 1, user: 0, application: 0 }, apps: [], portability: [] });
    expect(res.body.recentEvents[0]).toEqual({ type: 'record.created', actorKind: 'owner', at: expect.any(String) });
    expect(JSON.stringify(res.body)).not.toContain('private words');
    expect(JSON.stringify(res.body)).not.toContain('big.bin');
  });
});

describe('the cluster', () => {
  it('lists the processes seen lately, the queues, what is stored, and the instances not registered with dex', async () => {
    const leave = announcePresence(gw.redis, gw.redisPrefix, { kind: 'gateway-worker', queues: ['mail'] });
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const res = await request(admin()).get('/cluster').set(bearer()).expect(200);
      expect(res.body.processes).toEqual([expect.objectContaining({ kind: 'gateway-worker', queues: ['mail'], pid: process.pid })]);
      expect(res.body.queues.map((q: { name: string }) => q.name)).toContain('dex-registration');
      expect(res.body.storage).toMatchObject({ store: 'local', files: 1, fileBytes: 5000, databaseBytes: expect.any(Number) });
      expect(res.body.dex.counts).toEqual({ pending: 2, registered: 0, failed: 0 });
      expect(res.body.dex.waiting.map((w: { address: string }) => w.address).sort()).toEqual([alice.address, bob.address]);
    } finally {
      await leave();
    }
    expect((await request(admin()).get('/cluster').set(bearer()).expect(200)).body.processes).toEqual([]);
  });

  it('shows a failed job with its reason, retries it from scratch, and it completes; a job that has not failed is not retried', async () => {
    const queue = { connection: gw.redis, prefix: gw.redisPrefix };
    // Sign-up queued one registration per instance: a stand-in for the worker fails them while dex refuses.
    const job = await gw.dexRegistration.enqueue({ address: alice.address }, jobIds.registration(alice.address));
    let dexUp = false;
    const connection = queue.connection.duplicate({ maxRetriesPerRequest: null });
    const worker = new Worker(
      'dex-registration',
      async () => {
        if (!dexUp) throw new UnrecoverableError('dex refused the registration: 400 not under a certified cluster');
        return 'registered';
      },
      { connection, prefix: gw.redisPrefix },
    );
    try {
      const failed = await waitFor(async () => {
        const page = (await request(admin()).get('/queues/dex-registration/failed').set(bearer()).expect(200)).body;
        return page.total === 2 ? page : undefined;
      });
      expect(failed.jobs).toContainEqual(
        expect.objectContaining({ id: job.id, state: 'failed', failedReason: expect.stringMatching(/certified cluster/) }),
      );
      const cluster = (await request(admin()).get('/cluster').set(bearer()).expect(200)).body;
      expect(cluster.queues.find((q: { name: string }) => q.name === 'dex-registration')).toMatchObject({ failed: 2 });
      const inspected = await request(admin()).get(`/queues/dex-registration/jobs/${job.id}`).set(bearer()).expect(200);
      expect(inspected.body).toMatchObject({
        data: { address: alice.address },
        stacktrace: [expect.stringContaining('UnrecoverableError')],
      });

      dexUp = true;
      const { cookie } = await logIn({ name: 'olivia', password: PASSWORD });
      await asConsole(cookie).post(`/queues/dex-registration/jobs/${job.id}/retry`).expect(200);
      await waitFor(async () => ((await job.getState()) === 'completed' ? true : undefined));
      await asConsole(cookie).post(`/queues/dex-registration/jobs/${job.id}/retry`).expect(409);
      await asConsole(cookie).post('/queues/dex-registration/jobs/nope/retry').expect(404);
      await asConsole(cookie).get('/queues/no-such-queue/failed').expect(404);
    } finally {
      await worker.close();
      connection.disconnect();
    }
  });
});

describe('the audit', () => {
  it('records each change with its actor, target, details, client and answer, and never a password', async () => {
    const { cookie } = await logIn({ name: 'olivia', password: PASSWORD });
    await asConsole(cookie).put(`/instances/${bob.address}/quota`).send({ bytes: 1_000_000 }).expect(200);
    await asConsole(cookie).post(`/instances/${bob.address}/resume`).send({ reason: 'not suspended' }).expect(409);
    const entries = (await request(admin()).get('/audit?take=3').set(bearer()).expect(200)).body.entries;
    expect(entries.slice(0, 2)).toEqual([
      expect.objectContaining({
        actor: 'operator:olivia',
        action: 'instance.resume',
        target: bob.address,
        status: 409,
        details: { reason: 'not suspended' },
      }),
      expect.objectContaining({
        actor: 'operator:olivia',
        action: 'instance.quota',
        target: bob.address,
        status: 200,
        details: { bytes: 1_000_000 },
      }),
    ]);
    expect(entries[0].client).toMatch(/127\.0\.0\.1/);
    const history = (await request(admin()).get(`/instances/${alice.address}`).set(bearer()).expect(200)).body.history;
    expect(history.map((h: { actor: string }) => h.actor)).toEqual(['operator', 'operator']);
    const all = JSON.stringify((await request(admin()).get('/audit?take=500').set(bearer()).expect(200)).body);
    expect(all).not.toContain(PASSWORD);
    expect(all).not.toContain(TOKEN);
    expect(all).toContain('"action":"operator.add","target":"olivia"');
  });

  it('filters by actor, action prefix and target, and pages with before', async () => {
    const get = async (query: string) =>
      (await request(admin()).get(`/audit?${query}`).set(bearer()).expect(200)).body.entries as { id: number; action: string }[];
    const instance = await get('action=instance.');
    expect(new Set(instance.map((e) => e.action))).toEqual(new Set(['instance.suspend', 'instance.resume', 'instance.quota']));
    expect((await get(`target=${bob.address.slice(0, 3)}&actor=operator:olivia`)).length).toBe(2);
    const [first, second] = await get('take=2');
    expect((await get(`take=1&before=${first!.id}`))[0]!.id).toBe(second!.id);
  });

  it('exports the audit as JSON lines, through the API and the CLI', async () => {
    const res = await request(admin()).get('/audit/export').set(bearer()).expect(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    const lines = res.text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: number; action: string });
    expect(lines.length).toBeGreaterThan(10);
    expect(lines.map((l) => l.id)).toEqual([...lines.map((l) => l.id)].sort((a, b) => b - a));

    const server: Server = createServer(admin());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const env = { ADMIN_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, ADMIN_TOKEN: TOKEN };
      const out: string[] = [];
      expect(await adminCli(['audit', 'export', '--action', 'operator.'], { env, out: (t) => out.push(t), err: () => undefined })).toBe(0);
      // Refusals are recorded too: the weak password (400) and the taken name (409) around the one added.
      const exported = out
        .join('\n')
        .split('\n')
        .map((line) => JSON.parse(line) as { action: string; status: number });
      expect(exported.map((e) => [e.action, e.status])).toEqual([
        ['operator.add', 409],
        ['operator.add', 201],
        ['operator.add', 400],
      ]);
      const added = await adminCli(['operators', 'add', 'oscar'], {
        env,
        out: () => undefined,
        err: () => undefined,
        input: async () => `${PASSWORD}\n`,
      });
      expect(added).toBe(0);
      expect((await logIn({ name: 'oscar', password: PASSWORD })).res.status).toBe(200);
      expect(await adminCli(['operators', 'remove', 'oscar'], { env, out: () => undefined, err: () => undefined })).toBe(0);
      expect(await gw.db.consoleSession.count({ where: { actor: 'operator:oscar' } })).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

async function waitFor<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
