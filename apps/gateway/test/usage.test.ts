// Usage kept by the writing statements (issue 22): data records count at write and are refused past the
// records quota (413, nothing stored, however many write at once); updates and deletes keep the count;
// `usage verify` (admin API and CLI) recounts and reports drift, none when the product did the writing.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { UsageRepository } from '@pds/db';
import { callerRequests } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { adminCli } from '../src/admin/cli';
import { uploadFile } from './files-support';

const TOKEN = randomBytes(32).toString('hex');
const QUOTA = 1000;
const { gw, owners } = useGateway({ env: { ADMIN_TOKEN: TOKEN, QUOTA_RECORDS_BYTES: String(QUOTA) }, owners: ['alice', 'zed'] });
const { alice, zed } = owners;

const data = () => callerRequests(gw.app, alice, alice.address);
const instanceId = async (address: string) => (await gw.db.instance.findUniqueOrThrow({ where: { address } })).id;
const usage = async (address = alice.address) => new UsageRepository(gw.db).find(await instanceId(address));
const records = async () => Number((await gw.db.pool.query(`SELECT count(*) FROM "DataRecord"`)).rows[0].count);
const verify = () => request(gw.admin!).post('/usage/verify').set('Authorization', `Bearer ${TOKEN}`);

/** A record whose JSON text is `bytes` long: {"t":"…"} is 8 + the text. */
const sized = (bytes: number) => ({ t: 'x'.repeat(bytes - 8) });

it('counts records at write, refuses (413) what would pass the quota, storing nothing, whatever runs at once', async () => {
  await data()
    .post('/api/v2.6/data/q/items')
    .send([sized(100), sized(200)])
    .expect(201);
  expect(await usage()).toEqual({ files: 0, fileBytes: 0, records: 2, recordBytes: 300 });
  // Ten writers of 200 bytes at once into the 700 left: exactly three are stored.
  const writes = await Promise.all(Array.from({ length: 10 }, () => data().post('/api/v2.6/data/q/race').send(sized(200))));
  expect(writes.map((res) => res.status).sort()).toEqual([201, 201, 201, 413, 413, 413, 413, 413, 413, 413]);
  const refused = writes.find((res) => res.status === 413);
  expect(refused?.body).toEqual({ error: 'Payload Too Large', message: expect.stringMatching(/quota/) });
  expect(await usage()).toMatchObject({ records: 5, recordBytes: 900 });
  expect(await records()).toBe(5);
  // An array is stored whole or not at all; a batch across tables too.
  await data()
    .post('/api/v2.6/data/q/items')
    .send([sized(50), sized(60)])
    .expect(413);
  await data()
    .post('/api/v2.6/data-batch')
    .send([{ endpoint: 'q/items', data: sized(50), links: [{ endpoint: 'q/more', data: sized(60) }] }])
    .expect(413);
  expect(await records()).toBe(5);
  // Another instance has its own quota.
  await callerRequests(gw.app, zed, zed.address).post('/api/v2.6/data/q/items').send(sized(900)).expect(201);
  expect((await verify().expect(200)).body).toEqual({ checked: 2, drift: [] });
});

it('keeps the count through updates (growth refused past the quota) and deletes', async () => {
  const listed = await data().get('/api/v2.6/data/q/items').expect(200);
  const [first] = listed.body as { recordId: string }[];
  // 100 → 150 bytes fits (950 of 1000); → 250 does not.
  await data()
    .put('/api/v2.6/data')
    .send([{ endpoint: 'q/items', recordId: first!.recordId, data: sized(150) }])
    .expect(201);
  expect(await usage()).toMatchObject({ records: 5, recordBytes: 950 });
  await data()
    .put('/api/v2.6/data')
    .send([{ endpoint: 'q/items', recordId: first!.recordId, data: sized(250) }])
    .expect(413);
  expect(await usage()).toMatchObject({ recordBytes: 950 });
  await data().delete(`/api/v2.6/data?records=${first!.recordId}`).expect(200);
  expect(await usage()).toMatchObject({ records: 4, recordBytes: 800 });
  await data().delete('/api/v2.6/data/q/race').expect(200);
  expect(await usage()).toMatchObject({ records: 1, recordBytes: 200 });
  expect((await verify().expect(200)).body.drift).toEqual([]);
});

it("spreads writers over the instance's usage rows, and a quota lowered after an allowance was granted holds at once", async () => {
  const id = await instanceId(zed.address);
  const zeds = () => callerRequests(gw.app, zed, zed.address);
  await request(gw.admin!)
    .put(`/instances/${zed.address}/quota`)
    .set('Authorization', `Bearer ${TOKEN}`)
    .send({ recordsBytes: 1_000_000 })
    .expect(200);
  // Twenty writers at once: each writes on the row of its connection, so they seldom wait on one another.
  const writes = await Promise.all(Array.from({ length: 20 }, () => zeds().post('/api/v2.6/data/q/spread').send(sized(100))));
  expect(writes.every((res) => res.status === 201)).toBe(true);
  const rows = await gw.db.pool.query(`SELECT count(*)::int AS "n" FROM "InstanceUsage" WHERE "instanceId" = $1 AND "records" <> 0`, [id]);
  expect(rows.rows[0].n).toBeGreaterThan(1);
  expect(await usage(zed.address)).toMatchObject({ records: 21, recordBytes: 2900 });
  // The allowances granted under a million bytes must not outlive it: 100 bytes left now.
  await request(gw.admin!)
    .put(`/instances/${zed.address}/quota`)
    .set('Authorization', `Bearer ${TOKEN}`)
    .send({ recordsBytes: 3000 })
    .expect(200);
  await zeds().post('/api/v2.6/data/q/spread').send(sized(200)).expect(413);
  await zeds().post('/api/v2.6/data/q/spread').send(sized(100)).expect(201);
  await zeds().post('/api/v2.6/data/q/spread').send(sized(10)).expect(413);
  expect(await usage(zed.address)).toMatchObject({ records: 22, recordBytes: 3000 });
  await request(gw.admin!)
    .put(`/instances/${zed.address}/quota`)
    .set('Authorization', `Bearer ${TOKEN}`)
    .send({ recordsBytes: null })
    .expect(200);
});

describe('usage verify', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer(gw.admin!);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  async function run(...argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await adminCli(argv, { env: { ADMIN_URL: url, ADMIN_TOKEN: TOKEN }, out: (t) => out.push(t), err: (t) => err.push(t) });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  it('is the operator’s alone', async () => {
    await request(gw.admin!).post('/usage/verify').expect(401);
    await request(gw.admin!).post('/usage/verify').set('Authorization', `Bearer ${alice.token}`).expect(401);
  });

  it('reports no drift after the product’s own writes, and names the instance whose usage was changed behind its back', async () => {
    await uploadFile(gw, { address: alice.address, token: alice.token }, { name: 'v.txt', source: 'verify' }, Buffer.alloc(321));
    expect(await run('usage', 'verify')).toEqual({ code: 0, out: '2 instances checked: no drift', err: '' });
    const shown = await request(gw.admin!).get(`/instances/${alice.address}`).set('Authorization', `Bearer ${TOKEN}`).expect(200);
    expect(shown.body.usage).toEqual({ files: 1, fileBytes: 321, records: 1, recordBytes: 200 });

    await gw.db.pool.query(`UPDATE "InstanceUsage" SET "fileBytes" = "fileBytes" + 7 WHERE "instanceId" = $1 AND "share" = 0`, [
      await instanceId(alice.address),
    ]);
    const report = (await verify().expect(200)).body;
    expect(report).toEqual({
      checked: 2,
      drift: [
        {
          address: alice.address,
          stored: { files: 1, fileBytes: 328, records: 1, recordBytes: 200 },
          counted: { files: 1, fileBytes: 321, records: 1, recordBytes: 200 },
        },
      ],
    });
    const cli = await run('usage', 'verify');
    expect(cli.code).toBe(1);
    expect(cli.out).toMatch(new RegExp(`^ADDRESS\\s+KEPT\\s+COUNTED\\n${alice.address.replace(/\./g, '\\.')}\\s+1 files, 328 B`));
    expect(cli.err).toBe('admin: 1 of 2 instances drifted');
    await gw.db.pool.query(`UPDATE "InstanceUsage" SET "fileBytes" = "fileBytes" - 7 WHERE "instanceId" = $1 AND "share" = 0`, [
      await instanceId(alice.address),
    ]);
  });
});

describe('GET /api/v2.6/system/status', () => {
  /** The HAT Android SDK's model of an entry: title, and kind with metric, kind and (numeric) units. */
  interface HatSystemStatus {
    title: string;
    kind: { metric: string | number; kind: 'Text' | 'Numeric'; units?: string };
  }

  it('answers the original’s entries, with the storage bar’s figures from the kept usage and the quotas', async () => {
    await gw.db.pool.query(`UPDATE "User" SET "email" = 'alice@example.org' WHERE "username" = 'alice'`);
    for (const prefix of ['/api/v2.6', '/api/v2']) {
      const res = await callerRequests(gw.app, alice, alice.address).get(`${prefix}/system/status`).expect(200);
      const entries = res.body as HatSystemStatus[];
      for (const entry of entries) {
        expect(typeof entry.title).toBe('string');
        expect(['Text', 'Numeric']).toContain(entry.kind.kind);
        if (entry.kind.kind === 'Numeric') expect([typeof entry.kind.metric, typeof entry.kind.units]).toEqual(['number', 'string']);
      }
      const byTitle = Object.fromEntries(entries.map((e) => [e.title, e.kind]));
      expect(entries.map((e) => e.title)).toEqual([
        'Previous Login',
        'Owner Email',
        'Database Storage',
        'File Storage',
        'Database Storage Used',
        'File Storage Used',
        'Database Storage Used Share',
        'File Storage Used Share',
      ]);
      expect(byTitle['Previous Login']).toEqual({ metric: 'moments ago', kind: 'Text' });
      expect(byTitle['Owner Email']).toEqual({ metric: 'alice@example.org', kind: 'Text' });
      // QUOTA_RECORDS_BYTES is 1000 here, and QUOTA_BYTES the default 1 GiB.
      expect(byTitle['Database Storage']).toEqual({ metric: 1, units: 'kB', kind: 'Numeric' });
      expect(byTitle['File Storage']).toEqual({ metric: 1.07, units: 'GB', kind: 'Numeric' });
      expect(byTitle['Database Storage Used']).toEqual({ metric: 200, units: 'B', kind: 'Numeric' });
      expect(byTitle['File Storage Used']).toEqual({ metric: 321, units: 'B', kind: 'Numeric' });
      expect(byTitle['Database Storage Used Share']).toEqual({ metric: 20, units: '%', kind: 'Numeric' });
      expect(byTitle['File Storage Used Share']).toEqual({ metric: 0, units: '%', kind: 'Numeric' });
    }
  });

  it('answers the same storage figures exactly, in bytes, at /system/storage', async () => {
    const res = await callerRequests(gw.app, alice, alice.address).get('/api/v2.6/system/storage').expect(200);
    expect(res.body).toEqual({ files: 1, fileBytes: 321, fileQuotaBytes: 1024 ** 3, records: 1, recordBytes: 200, recordQuotaBytes: 1000 });
  });

  it('is the owner’s only', async () => {
    for (const path of ['/api/v2.6/system/status', '/api/v2.6/system/storage']) {
      await request(gw.app).get(path).set('Host', alice.address).expect(401);
      await callerRequests(gw.app, zed, alice.address).get(path).expect(401);
    }
  });
});
