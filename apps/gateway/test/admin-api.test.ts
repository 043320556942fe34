// The operator's admin API (issue 22): only ADMIN_TOKEN opens it; it lists and searches instances with
// their state, dates, usage and quotas, sets quotas, suspends and resumes with a recorded reason, and
// closes with a reason (the owner's closing flow, issue 19). The CLI (`pnpm admin`) does the same over HTTP.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import request from 'supertest';
import { adminOpenApi } from '@pds/gateway';
import { adminCli, formatBytes, parseQuota } from '../src/admin/cli';
import { adminRoutes } from '../src/admin/routes';
import { freePort } from '../../../scripts/lib/ports';
import { OPENAPI_FILES, serialise } from '../../../scripts/openapi';
import { documentedRoutes, declaredRoutes, openApiProblems } from '../../../test/support/openapi';
import { callerRequests, signUp, startTestGateway, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { uploadFile } from './files-support';

const TOKEN = randomBytes(32).toString('hex');
let gw: TestGateway;
let alice: SignedUp;
let bob: SignedUp;
let carol: SignedUp;

beforeAll(async () => {
  gw = await startTestGateway({ ADMIN_TOKEN: TOKEN, QUOTA_BYTES: String(2 * 1024 ** 3) });
  alice = await signUp(gw.app, 'alice');
  gw.clock.advance(60);
  bob = await signUp(gw.app, 'bob');
  gw.clock.advance(60);
  carol = await signUp(gw.app, 'carol');
});
afterAll(() => gw.close());

const admin = () => gw.admin!;
const as = (token: string | undefined) => {
  const send = (method: 'get' | 'post' | 'put') => (path: string) => {
    const req = request(admin())[method](path);
    return token === undefined ? req : req.set('Authorization', `Bearer ${token}`);
  };
  return { get: send('get'), post: send('post'), put: send('put') };
};
const operator = () => as(TOKEN);

describe('who may call', () => {
  it('answers 401 without the admin token, with a wrong one, and with an instance token', async () => {
    for (const token of [undefined, randomBytes(32).toString('hex'), TOKEN.slice(1), alice.token]) {
      const res = await as(token).get('/instances').expect(401);
      expect(res.body).toEqual({ error: 'Not Authenticated', message: expect.stringContaining('Authorization: Bearer') });
    }
    await request(admin()).get('/instances').set('Authorization', TOKEN).expect(401);
    await as(alice.token).post(`/instances/${bob.address}/suspend`).send({ reason: 'no' }).expect(401);
    expect((await gw.db.instance.findUnique({ where: { address: bob.address } }))?.state).toBe('active');
  });

  it('is not part of the public routes: an instance or the cluster address answers 404 there, token or not', async () => {
    for (const host of [alice.address, 'pds.test']) {
      await request(gw.app).get('/instances').set('Host', host).set('Authorization', `Bearer ${TOKEN}`).expect(404);
      await request(gw.app).post(`/instances/${bob.address}/suspend`).set('Host', host).send({ reason: 'x' }).expect(404);
    }
    // And the admin listener serves nothing of the public API.
    await request(admin()).get('/users/access_token').set('Host', alice.address).expect(404);
  });
});

describe('instances', () => {
  it('lists them newest first with state, dates, usage and quotas, and pages through them', async () => {
    const res = await operator().get('/instances').expect(200);
    expect(res.body).toMatchObject({ total: 3, skip: 0, take: 50 });
    expect(res.body.instances.map((i: { address: string }) => i.address)).toEqual([carol.address, bob.address, alice.address]);
    expect(res.body.instances[2]).toEqual({
      address: alice.address,
      state: 'active',
      createdAt: expect.stringMatching(/Z$/),
      // Sign-up issued a token.
      lastActiveAt: expect.stringMatching(/Z$/),
      // No worker runs here to register it with dex.
      dexState: 'pending',
      ownerEmail: 'alice@example.com',
      usage: { files: 0, fileBytes: 0, records: 0, recordBytes: 0 },
      quota: { bytes: 2 * 1024 ** 3, recordsBytes: 256 * 1024 ** 2 },
      customQuota: {},
    });
    const page = await operator().get('/instances?skip=1&take=1').expect(200);
    expect(page.body).toMatchObject({ total: 3, skip: 1, take: 1, instances: [{ address: bob.address }] });
  });

  it('searches by part of the address or of the owner e-mail, and by state', async () => {
    const find = async (query: string) =>
      ((await operator().get(`/instances?${query}`).expect(200)).body.instances as { address: string }[]).map((i) => i.address);
    expect(await find('q=BO')).toEqual([bob.address]);
    expect(await find('q=carol%40example')).toEqual([carol.address]);
    // LIKE's wildcards in the search are plain characters.
    expect(await find('q=%25')).toEqual([]);
    expect(await find('q=_')).toEqual([]);
    expect(await find('state=suspended')).toEqual([]);
    expect(await find('state=active&q=pds.test')).toHaveLength(3);
  });

  it("counts an instance's completed file bytes and its records' bytes", async () => {
    const owner = { address: alice.address, token: alice.token };
    await uploadFile(gw, owner, { name: 'a.txt', source: 'admin' }, Buffer.alloc(1000, 1));
    await uploadFile(gw, owner, { name: 'b.txt', source: 'admin' }, Buffer.alloc(234, 2));
    const records = [{ n: 1 }, { text: 'two' }];
    await callerRequests(gw.app, alice, alice.address).post('/api/v2.6/data/notes/items').send(records).expect(201);
    const res = await operator().get(`/instances/${alice.address}`).expect(200);
    // The records' JSON texts: {"n":1} and {"text":"two"}.
    expect(res.body.usage).toEqual({ files: 2, fileBytes: 1234, records: 2, recordBytes: 7 + 14 });
    expect(res.body.history).toEqual([]);
  });

  it('sets quotas, each on its own, and sets them back to the cluster default with null', async () => {
    const set = (body: object) => operator().put(`/instances/${bob.address}/quota`).send(body);
    expect((await set({ bytes: 5 * 1024 ** 2 }).expect(200)).body).toMatchObject({
      quota: { bytes: 5 * 1024 ** 2, recordsBytes: 256 * 1024 ** 2 },
      customQuota: { bytes: 5 * 1024 ** 2 },
    });
    expect((await set({ recordsBytes: 1000 }).expect(200)).body.customQuota).toEqual({ bytes: 5 * 1024 ** 2, recordsBytes: 1000 });
    expect((await set({ bytes: null }).expect(200)).body).toMatchObject({
      quota: { bytes: 2 * 1024 ** 3, recordsBytes: 1000 },
      customQuota: { recordsBytes: 1000 },
    });
    const row = await gw.db.instance.findUnique({ where: { address: bob.address } });
    expect([row?.quotaBytes, row?.quotaRecordsBytes]).toEqual([null, 1000n]);
  });

  it('suspends and resumes with a reason, recording each change; refuses changes that do not apply', async () => {
    const suspended = await operator().post(`/instances/${carol.address}/suspend`).send({ reason: 'abuse report 17' }).expect(200);
    expect(suspended.body).toMatchObject({ state: 'suspended', stateReason: 'abuse report 17', stateChangedAt: expect.any(String) });
    expect(suspended.body.history).toEqual([{ state: 'suspended', reason: 'abuse report 17', actor: 'operator', at: expect.any(String) }]);
    const again = await operator().post(`/instances/${carol.address}/suspend`).send({ reason: 'twice' }).expect(409);
    expect(again.body.message).toMatch(/is suspended/);
    expect((await operator().get('/instances?state=suspended').expect(200)).body.instances).toHaveLength(1);

    const resumed = await operator().post(`/instances/${carol.address}/resume`).send({ reason: 'resolved' }).expect(200);
    expect(resumed.body.state).toBe('active');
    expect(resumed.body.history.map((c: { state: string; reason: string }) => [c.state, c.reason])).toEqual([
      ['active', 'resolved'],
      ['suspended', 'abuse report 17'],
    ]);
    await operator().post(`/instances/${carol.address}/resume`).send({ reason: 'again' }).expect(409);
    await operator().post('/instances/nobody.pds.test/suspend').send({ reason: 'x' }).expect(404);
    await operator().get('/instances/nobody.pds.test').expect(404);
  });

  it('closes with a reason and the grace date, as the owner would; the instance answers 410; refuses to close twice', async () => {
    await operator().post(`/instances/${bob.address}/close`).send({}).expect(400);
    await operator().post('/instances/nobody.pds.test/close').send({ reason: 'x' }).expect(404);
    const res = await operator().post(`/instances/${bob.address}/close`).send({ reason: 'court order 5' }).expect(200);
    const grace = new Date(gw.clock().getTime() + 7 * 24 * 3600 * 1000).toISOString();
    expect(res.body).toMatchObject({ state: 'closing', stateReason: 'court order 5', closeAfter: grace });
    expect(res.body.history[0]).toEqual({ state: 'closing', reason: 'court order 5', actor: 'operator', at: expect.any(String) });
    await callerRequests(gw.app, bob, bob.address).get('/api/v2.6/data/notes/items').expect(410);
    expect((await operator().post(`/instances/${bob.address}/close`).send({ reason: 'twice' }).expect(409)).body.message).toMatch(
      /closing/,
    );
    // The owner's cancel brings it back (the operator has no cancel: resume is for suspended instances).
    await callerRequests(gw.app, bob, bob.address).post('/api/v2.6/instance/close/cancel').expect(200);
    expect((await gw.db.instance.findUnique({ where: { address: bob.address } }))?.closeAfter).toBeNull();
  });

  it("closes a suspended instance too, and the owner's cancel leaves it suspended", async () => {
    await operator().post(`/instances/${carol.address}/suspend`).send({ reason: 'abuse report 18' }).expect(200);
    await operator().post(`/instances/${carol.address}/close`).send({ reason: 'abuse confirmed' }).expect(200);
    const cancelled = await callerRequests(gw.app, carol, carol.address).post('/api/v2.6/instance/close/cancel').expect(200);
    expect(cancelled.body).toEqual({ state: 'suspended' });
    await callerRequests(gw.app, carol, carol.address).get('/api/v2.6/data/notes/items').expect(423);
    await operator().post(`/instances/${carol.address}/resume`).send({ reason: 'cleared' }).expect(200);
  });

  it('refuses bad input with 400 naming the field, and changes nothing', async () => {
    for (const query of ['state=gone', 'take=0', 'take=501', 'skip=-1']) {
      expect((await operator().get(`/instances?${query}`).expect(400)).body.error).toBe('Bad Request');
    }
    for (const body of [{}, { bytes: 0 }, { bytes: -5 }, { bytes: 1.5 }, { bytes: '100' }, { recordsBytes: 2 ** 60 }]) {
      await operator().put(`/instances/${alice.address}/quota`).send(body).expect(400);
    }
    for (const body of [{}, { reason: '' }, { reason: '   ' }, { reason: 'x'.repeat(1001) }]) {
      const res = await operator().post(`/instances/${alice.address}/suspend`).send(body).expect(400);
      expect(res.body.message).toMatch(/reason/);
    }
    const row = await gw.db.instance.findUnique({ where: { address: alice.address } });
    expect([row?.state, row?.quotaBytes]).toEqual(['active', null]);
  });
});

describe('the CLI (pnpm admin)', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer(admin());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await adminCli(argv, { env: { ADMIN_URL: url, ADMIN_TOKEN: TOKEN }, out: (t) => out.push(t), err: (t) => err.push(t) });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  it('prints instances as a table, or the JSON of the API', async () => {
    const table = await run('instances', 'list', '--take', '2');
    expect(table.code).toBe(0);
    const lines = table.out.split('\n');
    expect(lines[0]).toMatch(/^ADDRESS\s+STATE\s+CREATED\s+LAST ACTIVE\s+FILES\s+FILE BYTES \/ QUOTA\s+RECORDS\s+RECORD BYTES \/ QUOTA$/);
    expect(lines[1]).toMatch(new RegExp(`^${carol.address}\\s+active\\s+\\d{4}-\\d\\d-\\d\\d`));
    expect(lines.at(-1)).toBe('1-2 of 3');
    const json = await run('--json', 'instances', 'list', '--query', 'alice');
    expect(JSON.parse(json.out)).toMatchObject({ total: 1, instances: [{ address: alice.address, usage: { fileBytes: 1234 } }] });
  });

  it('suspends, resumes and sets quotas, and says why a call failed', async () => {
    expect((await run('instances', 'suspend', bob.address, '--reason', 'unpaid')).out).toMatch(/state:\s+suspended \(unpaid\)/);
    expect((await run('instances', 'resume', bob.address, '--reason', 'paid')).out).toMatch(/suspended by operator: unpaid/);
    const quota = await run('instances', 'quota', bob.address, '--bytes', '3GiB', '--records-bytes', 'default');
    expect(quota.out).toMatch(/files:\s+0, 0 B of 3 GiB\n/);
    expect(quota.out).toMatch(/records:\s+0, 0 B of 256 MiB \(cluster default\)/);
    const failed = await run('instances', 'resume', bob.address, '--reason', 'again');
    expect(failed).toMatchObject({ code: 1, err: expect.stringMatching(/^admin: 409 The instance .* is active/) });
    expect(await run('instances', 'close', bob.address)).toMatchObject({ code: 1, err: expect.stringMatching(/--reason/) });
    expect((await run('instances', 'close', bob.address, '--reason', 'gone')).out).toMatch(
      /state:\s+closing \(gone\)\nerased after:\s+\d{4}-/,
    );
    await callerRequests(gw.app, bob, bob.address).post('/api/v2.6/instance/close/cancel').expect(200);
    const closed = `http://127.0.0.1:${await freePort()}`;
    const errors: string[] = [];
    const unreachable = await adminCli(['instances', 'list'], {
      env: { ADMIN_URL: closed, ADMIN_TOKEN: TOKEN },
      out: () => undefined,
      err: (text) => errors.push(text),
    });
    expect([unreachable, errors]).toEqual([1, [`admin: cannot reach the admin API at ${closed}: ECONNREFUSED`]]);
    const denied = await adminCli(['instances', 'list'], {
      env: { ADMIN_URL: url, ADMIN_TOKEN: 'x'.repeat(32) },
      out: () => undefined,
      err: () => undefined,
    });
    expect(denied).toBe(1);
  });

  it('reads sizes with binary units and prints them so', () => {
    expect([parseQuota('2GiB'), parseQuota('512 mib'), parseQuota('1048576'), parseQuota('1.5K'), parseQuota('default')]).toEqual([
      2 * 1024 ** 3,
      512 * 1024 ** 2,
      1048576,
      1536,
      null,
    ]);
    for (const bad of ['', 'lots', '0', '-1GiB', '9EiB']) expect(() => parseQuota(bad)).toThrow(/size/);
    expect([formatBytes(0), formatBytes(1536), formatBytes(1024 ** 3), formatBytes(1234)]).toEqual(['0 B', '1.5 KiB', '1 GiB', '1.2 KiB']);
  });
});

describe('the admin OpenAPI document', () => {
  const doc = adminOpenApi() as Parameters<typeof documentedRoutes>[0];

  it('is valid, current in docs/openapi-admin.json (pnpm openapi), and describes exactly the admin routes', async () => {
    expect(openApiProblems(doc)).toEqual([]);
    expect(JSON.parse(readFileSync(OPENAPI_FILES.admin, 'utf8'))).toEqual(JSON.parse(serialise(doc)));
    const served = await request(admin()).get('/api/openapi.json').expect(200);
    expect(served.body).toEqual(JSON.parse(JSON.stringify(doc)));
    const nothing = new Proxy({}, { get: () => undefined }) as never;
    expect(documentedRoutes(doc)).toEqual(declaredRoutes(adminRoutes(nothing, adminOpenApi)));
    expect(documentedRoutes(doc)).toEqual(expect.arrayContaining(['GET /instances', 'POST /instances/{address}/suspend']));
  });
});
