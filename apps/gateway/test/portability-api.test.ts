// An instance taken out and put into another cluster, on both stores, as clients see it: instance A (files,
// one of 64 MiB, shared and public; records linked across namespaces; a bundle and a debit; an app pushed
// with dex's signature and set up; a second user) is exported by the worker's job, downloaded through the
// signed address, uploaded as an import into an empty instance of cluster B (its own gateway, dex, worker,
// database and store; the instance registered at B's dex with its own keys), and B answers the same through
// the API. The archive holds A's activity log and share links (neither restored: B's are B's own) and no
// secret. A version 1
// archive (no activity section) still imports. Damaged, cut, newer-version archives and a non-empty target are
// refused with a report, and B is unchanged.
import { createHash, randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import type { Worker } from 'bullmq';
import sharp from 'sharp';
import request from 'supertest';
import { PortabilityRepository, UsageRepository } from '@pds/db';
import { createLogger } from '@pds/runtime';
import { blockingRedis, QUEUE_NAMES, runQueue } from '@pds/queue';
import { exportArchiveProcessor } from '../src/jobs/export-archive';
import { importArchiveProcessor } from '../src/jobs/import-archive';
import { startTestCluster, type TestCluster } from '../../../test/support/dex';
import { eventually } from '../../../test/support/eventually';
import { addUser, callerRequests, requireEnv, signUp, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { appRecord, installApp, startGatewayWithDex } from './apps-fixtures';
import { call, getBytes, putBytes, storeEnv, STORES, uploadFile, type As } from './files-support';
import { asVersion1, edited, entriesOf } from './portability-fixtures';

const MiB = 1024 * 1024;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const LARGE = 64 * MiB;

jest.setTimeout(240_000);

interface ActivityShown {
  kind: string;
  type: string;
  actor: { kind: string; id: string | null };
  object: Record<string, unknown>;
  address: string | null;
  time: string;
  times: number;
}

/** The lines of the archive's activity section. */
async function activityOf(archive: Buffer): Promise<Record<string, unknown>[]> {
  return (await entriesOf(archive))
    .filter((entry) => entry.header.name.startsWith('activity/'))
    .flatMap((entry) => entry.data.toString().trim().split('\n'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Runs the export and import jobs for a gateway, on its queues, as the gateway worker does. */
function runJobs(gw: TestGateway): Worker[] {
  const repository = new PortabilityRepository(gw.db);
  const logger = createLogger({ level: 'silent' });
  const connection = blockingRedis({ url: requireEnv('TEST_REDIS_URL') });
  const queue = { connection, prefix: gw.redisPrefix };
  const workers = [
    runQueue(
      QUEUE_NAMES.exportArchive,
      exportArchiveProcessor({ repository, store: gw.blobStore, clock: gw.clock, ttlHours: 48 }),
      queue,
      logger,
      1,
    ),
    runQueue(QUEUE_NAMES.importArchive, importArchiveProcessor({ repository, store: gw.blobStore, clock: gw.clock }), queue, logger, 1),
  ];
  let open = workers.length;
  for (const worker of workers) worker.on('closed', () => --open === 0 && connection.disconnect());
  return workers;
}

const api = (gw: TestGateway, who: SignedUp) => callerRequests(gw.app, who, who.address);

async function exportOf(gw: TestGateway, owner: SignedUp): Promise<Buffer> {
  const started = await api(gw, owner).post('/api/v2.6/export');
  expect(started.status).toBe(202);
  expect(started.body).toMatchObject({ status: 'running', exportId: expect.any(String) });
  const ready = await eventually(async () => {
    const res = await api(gw, owner).get(`/api/v2.6/export/${started.body.exportId}`);
    expect(res.body.status).not.toBe('failed');
    return res.body.status === 'ready' && res.body;
  }, 120_000);
  expect(ready).toMatchObject({ progress: 1, downloadUrl: expect.any(String), expiresAt: expect.any(String) });
  const download = await getBytes(gw, ready.downloadUrl);
  expect(download.status).toBe(200);
  expect(download.body.length).toBe(ready.bytes);
  return download.body;
}

/** The three steps of an import, then its row once finished. */
async function importInto(gw: TestGateway, owner: SignedUp, archive: Buffer) {
  const created = await api(gw, owner).post('/api/v2.6/import');
  expect(created.status).toBe(201);
  expect(await putBytes(gw, created.body.uploadUrl, archive)).toBe(200);
  const completed = await api(gw, owner).put(`/api/v2.6/import/${created.body.importId}/complete`);
  expect(completed.status).toBe(202);
  return eventually(async () => {
    const res = await api(gw, owner).get(`/api/v2.6/import/${created.body.importId}`);
    return ['done', 'failed'].includes(res.body.status) && res.body;
  }, 120_000);
}

/** Everything B shows its owner, with account ids turned into usernames (they differ between clusters). */
async function view(gw: TestGateway, owner: SignedUp, ownerAlias: string) {
  const users = (await api(gw, owner).get('/users/user')).body as { userId: string; username: string; enabled: boolean }[];
  const nameOf = new Map(users.map((u) => [u.userId, u.userId === owner.userId ? ownerAlias : u.username]));
  const listing = (await call(gw, 'get', '/listing?take=200', owner)).body.files as Record<string, unknown>[];
  const files: (Record<string, unknown> & { fileId?: unknown })[] = [];
  for (const file of listing) {
    const {
      contentUrl,
      thumbnailUrl: _thumbnail,
      permissions,
      ...rest
    } = file as Record<string, unknown> & {
      contentUrl: string;
      permissions: { userId: string; contentReadable: boolean }[];
    };
    const bytes = await getBytes(gw, contentUrl);
    files.push({
      ...rest,
      sha256: sha256(bytes.body),
      permissions: permissions
        .map((p) => ({ username: nameOf.get(p.userId), contentReadable: p.contentReadable }))
        .sort((x, y) => String(x.username).localeCompare(String(y.username))),
    });
  }
  const records: Record<string, unknown> = {};
  for (const table of ['social/posts', 'social/comments', 'notes/items']) {
    records[table] = (await api(gw, owner).get(`/api/v2.6/data/${table}`)).body;
  }
  const bundles = (await api(gw, owner).get('/api/v2.6/data-bundle/posts')).body;
  const search = (await api(gw, owner).get('/api/v2.6/combinator/posts-saying?orderBy=text')).body;
  // Terms come back unaccepted (so not active): the rest of the debit is the same.
  const {
    permissionsActive: _active,
    start: _start,
    ...debit
  } = unaccepted((await api(gw, owner).get('/api/v2.6/data-debit/reader')).body);
  // Ids differ between clusters, and restored accounts wait disabled for the owner.
  const accounts = users
    .filter((u) => u.userId !== owner.userId)
    .map(({ userId: _id, enabled: _enabled, ...u }) => u)
    .sort((x, y) => x.username.localeCompare(y.username));
  return { files, records, bundles, search, debit, accounts };
}

/** The value with every `accepted` and `active` false. */
function unaccepted(value: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value), (key, field: unknown) => (key === 'accepted' || key === 'active' ? false : field));
}

describe.each(STORES)('export and import on the %s store', (store) => {
  let a: TestGateway;
  let b: TestGateway;
  let cluster: TestCluster;
  let workers: Worker[];
  let alice: SignedUp;
  let bob: { userId: string; token: string };
  let carol: SignedUp;
  let appToken: string;
  let linkUrl: URL;
  let archive: Buffer;

  beforeAll(async () => {
    const started = await startGatewayWithDex(storeEnv(store));
    a = started.gw;
    // B runs its own worker (the import job among its jobs), as a cluster does.
    cluster = await startTestCluster({ shared: storeEnv(store) });
    b = cluster.gw;
    workers = runJobs(a);
    alice = await signUp(a.app, 'alice');
    bob = await addUser(a.app, alice, 'bob');
    carol = await signUp(b.app, 'carol');
    // The importing instance is B's own: its keys, registered at B's dex.
    await eventually(async () => {
      const rows = await b.db.pool.query<{ dexState: string }>(`SELECT "dexState" FROM "Instance" WHERE "address" = $1`, [carol.address]);
      return rows.rows[0]?.dexState === 'registered';
    }, 30_000);
    const owner: As = { address: alice.address, token: alice.token };

    const large = await uploadFile(a, owner, { name: 'film.mov', source: 'camera', tags: ['big'] }, randomBytes(LARGE));
    const shared = await uploadFile(
      a,
      owner,
      { name: 'notes.txt', source: 'desk', title: 'Notes', description: 'mine' },
      Buffer.from('notes'),
    );
    const open = await uploadFile(a, owner, { name: 'poster.png', source: 'desk', tags: ['public', 'art'] }, randomBytes(1000));
    await uploadFile(a, owner, { name: 'notes.txt', source: 'desk' }, Buffer.from('second of the name'));
    const pixels = Buffer.alloc(64 * 48 * 3, 90);
    await uploadFile(
      a,
      owner,
      { name: 'photo.jpg', source: 'camera' },
      await sharp(pixels, { raw: { width: 64, height: 48, channels: 3 } })
        .jpeg()
        .toBuffer(),
    );
    expect((await call(a, 'get', `/allowAccess/${shared.fileId}/${bob.userId}?content=true`, owner)).status).toBe(200);
    expect((await call(a, 'get', `/allowAccess/${large.fileId}/${bob.userId}?content=false`, owner)).status).toBe(200);
    expect((await call(a, 'get', `/allowAccessPublic/${open.fileId}`, owner)).status).toBe(200);
    // A share link with a password, used once by someone without an account.
    const link = await call(a, 'post', '/links', owner, { fileIds: [shared.fileId, open.fileId], password: 'for-the-accountant' });
    expect(link.status).toBe(201);
    linkUrl = new URL(link.body.url as string);
    const unlocked = await request(a.app).post(linkUrl.pathname).set('Host', alice.address).send({ password: 'for-the-accountant' });
    expect(unlocked.status).toBe(200);

    const batch = await api(a, alice)
      .post('/api/v2.6/data-batch')
      .send([
        { endpoint: 'social/posts', data: { text: 'hello' }, links: [{ endpoint: 'notes/items', data: { n: 1 } }] },
        { endpoint: 'social/comments', data: { text: 'nice' } },
      ]);
    expect(batch.status).toBe(201);
    const ids = (batch.body as { recordId: string }[]).map((r) => r.recordId);
    expect((await api(a, alice).post(`/api/v2.6/data-link?records=${ids[0]}&records=${ids[ids.length - 1]}`)).status).toBe(201);

    const saved = [{ endpoint: 'social/posts', filters: [{ field: 'text', operator: { operator: 'find', search: 'hello' } }] }];
    expect((await api(a, alice).post('/api/v2.6/combinator/posts-saying').send(saved)).status).toBe(201);
    const debit = await api(a, alice)
      .post('/api/v2.6/data-debit/reader')
      .send({
        dataDebitKey: 'reader',
        purpose: 'Reading posts',
        start: a.clock().toISOString(),
        period: 3600,
        termsUrl: 'https://reader.example/terms',
        cancelAtPeriodEnd: false,
        requestClientName: 'Reader',
        requestClientUrl: 'https://reader.example',
        requestClientLogoUrl: 'https://reader.example/logo.png',
        holderUserId: bob.userId,
        bundle: { name: 'posts', bundle: { posts: { endpoints: [{ endpoint: 'social/posts' }] } } },
      });
    expect(debit.status).toBe(201);
    expect((await api(a, alice).get('/api/v2.6/data-debit/reader/enable')).status).toBe(200);
    // An app pushed with dex's signature and set up by the owner; it writes a record of its own.
    const notes = await installApp(a, started.dex, alice, appRecord('notes'));
    appToken = notes.token;
    expect((await callerRequests(a.app, notes, alice.address).post('/api/v2.6/data/notes/items').send({ text: 'by the app' })).status).toBe(
      201,
    );
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.close()));
    await Promise.all([a?.close(), cluster?.close()]);
  });

  it('exports A, downloads it through the signed address, imports it into B, and B answers the same', async () => {
    // A read that the log keeps (written after the answer, in batches): the app reads its records.
    expect((await callerRequests(a.app, { token: appToken }, alice.address).get('/api/v2.6/data/notes/items')).status).toBe(200);
    const logged = await eventually(async () => {
      const res = await api(a, alice).get('/api/v2.6/activity?take=1000');
      const entries = res.body as ActivityShown[];
      return entries.some((entry) => entry.kind === 'read' && entry.type.startsWith('record')) && entries;
    }, 10_000);
    archive = await exportOf(a, alice);
    const exported = await activityOf(archive);
    // Every entry the log showed before the export is in the archive, people named by username.
    const users = (await api(a, alice).get('/users/user')).body as { userId: string; username: string }[];
    const nameOf = new Map(users.map((u) => [u.userId, u.username]));
    for (const entry of logged) {
      expect(exported).toContainEqual({
        kind: entry.kind,
        type: entry.type,
        actor: {
          kind: entry.actor.kind,
          ...(entry.actor.id && nameOf.has(entry.actor.id) ? { username: nameOf.get(entry.actor.id) } : {}),
        },
        object: entry.object,
        ...(entry.address === null ? {} : { address: entry.address }),
        time: entry.time,
        times: entry.times,
      });
    }
    expect(exported.some((entry) => entry.kind === 'change' && entry.type === 'record.created')).toBe(true);
    // The link, without its secrets; its use, by someone without an account.
    const links = (await entriesOf(archive)).filter((entry) => entry.header.name.startsWith('links/'));
    expect(links.map((entry) => JSON.parse(entry.data.toString()) as unknown)).toEqual([
      expect.objectContaining({ hasPassword: true, views: 1, downloads: 0, allowDownload: true }),
    ]);
    expect(exported).toContainEqual(expect.objectContaining({ type: 'link.used', actor: { kind: 'anonymous' } }));

    const done = await importInto(b, carol, archive);
    expect(done).toMatchObject({ status: 'done', progress: 1 });
    expect(done.counts).toMatchObject({ users: 3, apps: 1, bundles: 1, combinators: 1, debits: 1, files: 5, records: 4 });
    // The counts are what was restored: the activity log and the share links are not.
    expect(done.counts).not.toHaveProperty('activity');
    expect(done.counts).not.toHaveProperty('links');
    expect(await b.db.shareLink.count()).toBe(0);

    const before = await view(a, alice, 'owner');
    const after = await view(b, carol, 'owner');
    expect(after.files.map((f) => f.fileId).sort()).toEqual(before.files.map((f) => f.fileId).sort());
    expect(after).toEqual(before);
    // The saved search finds the one post on both sides (not an error on both).
    expect((before.search as unknown[]).length).toBe(1);
    // Accounts come back disabled, and debits unaccepted: the owner approves them again on this cluster.
    expect(after.accounts).toHaveLength(2);
    expect(after.accounts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ username: 'bob', kind: 'user' }),
        expect.objectContaining({ kind: 'application' }),
      ]),
    );
    const bobOnB = ((await api(b, carol).get('/users/user')).body as { username: string; enabled: boolean }[]).find(
      (u) => u.username === 'bob',
    );
    expect(bobOnB?.enabled).toBe(false);
    // The import set B's usage to what it restored, the same as A's (usage.ts): no drift on either.
    const usageOf = async (gw: TestGateway, who: SignedUp) => {
      const id = (await gw.db.instance.findUniqueOrThrow({ where: { address: who.address } })).id;
      return new UsageRepository(gw.db).find(id);
    };
    expect(await usageOf(b, carol)).toEqual(await usageOf(a, alice));
    for (const gw of [a, b]) expect((await new UsageRepository(gw.db).verify()).drift).toEqual([]);
    const apps = await b.db.pool.query(`SELECT "appId", "setup", "enabled" FROM "Application"`);
    expect(apps.rows).toEqual([{ appId: 'notes', setup: false, enabled: false }]);
    const terms = await b.db.pool.query(`SELECT "accepted" FROM "DataDebitPermission"`);
    expect(terms.rows).toEqual([{ accepted: false }]);
    // Thumbnails are not in the archive: B's worker makes the restored image's again.
    await eventually(async () => {
      const listed = (await call(b, 'get', '/listing?take=200', { address: carol.address, token: carol.token })).body.files as {
        name: string;
        thumbnailUrl?: string;
      }[];
      return listed.find((file) => file.name === 'photo.jpg')?.thumbnailUrl;
    }, 30_000);
    // A later upload of a name already taken gets the next id, not a restored one.
    const again = await uploadFile(
      b,
      { address: carol.address, token: carol.token },
      { name: 'notes.txt', source: 'desk' },
      Buffer.from('3'),
    );
    expect(before.files.map((f) => f.fileId)).not.toContain(again.fileId);
    // A's history stays A's: no read by the app on A shows in B's log.
    const onB = (await api(b, carol).get('/api/v2.6/activity?take=1000')).body as ActivityShown[];
    expect(onB.filter((entry) => entry.kind === 'read' && entry.type.startsWith('record'))).toEqual([]);
  });

  it('writes no password hash, key or token into the archive', async () => {
    const tar = gunzipSync(archive);
    const secrets = await a.db.pool.query<{ value: string }>(
      `SELECT "passwordHash" AS "value" FROM "User" WHERE "passwordHash" IS NOT NULL
      UNION ALL SELECT "privateKeyEnc" FROM "Instance" UNION ALL SELECT "publicKeyPem" FROM "Instance"
      UNION ALL SELECT "tokenHash" FROM "ShareLink" UNION ALL SELECT "passwordHash" FROM "ShareLink"`,
    );
    expect(secrets.rows.length).toBeGreaterThan(2);
    for (const { value } of secrets.rows) expect(tar.includes(Buffer.from(value))).toBe(false);
    for (const token of [alice.token, bob.token, appToken, linkUrl.pathname.split('/')[2] as string]) {
      expect(tar.includes(Buffer.from(token))).toBe(false);
    }
    expect(tar.includes(Buffer.from('PRIVATE KEY'))).toBe(false);
    expect(tar.includes(Buffer.from('passwordHash'))).toBe(false);
  });

  it('refuses a damaged, cut or newer-version archive with a report, and an import into a non-empty instance, changing nothing', async () => {
    const dave = await signUp(b.app, 'dave');
    const flipped = Buffer.from(archive);
    const middle = Math.floor(flipped.length / 2);
    flipped[middle] = (flipped[middle] as number) ^ 0xff;
    const newer = await edited(archive, (entries) =>
      entries.map((entry) =>
        entry.header.name === 'pds-export.json'
          ? { ...entry, data: Buffer.from(JSON.stringify({ format: 'pds-export', version: 4 })) }
          : entry,
      ),
    );
    const archiveGone = async (importId: string) => (await b.blobStore.stat(`${dave.address}/.imports/${importId}.tar.gz`)) === null;
    const rows = async () =>
      (
        await b.db.pool.query(`SELECT count(*)::int AS n FROM "File" f JOIN "Instance" i ON i.id = f."instanceId" WHERE i.address = $1`, [
          dave.address,
        ])
      ).rows;
    const objects = async () => {
      const keys: string[] = [];
      // The uploaded archive is removed too (stat below): a container listing may show it a moment longer.
      for await (const object of b.blobStore.list(`${dave.address}/`)) if (!object.key.includes('/.imports/')) keys.push(object.key);
      return keys;
    };
    for (const [damage, bytes, problem] of [
      ['a flipped byte', flipped, /corrupt|hash-mismatch/],
      ['a cut archive', archive.subarray(0, archive.length - 1000), /truncated/],
      ['a newer version', newer, /unsupported-version/],
    ] as const) {
      const failed = await importInto(b, dave, bytes);
      expect({ damage, status: failed.status }).toEqual({ damage, status: 'failed' });
      expect(failed.report.problem).toMatch(problem);
      expect(failed.report.message).toEqual(expect.any(String));
      expect(await rows()).toEqual([{ n: 0 }]);
      expect(await objects()).toEqual([]);
      expect(await archiveGone(failed.importId)).toBe(true);
    }
    const users = await b.db.pool.query(
      `SELECT count(*)::int AS n FROM "User" u JOIN "Instance" i ON i.id = u."instanceId" WHERE i.address = $1`,
      [dave.address],
    );
    expect(users.rows).toEqual([{ n: 1 }]);

    // An archive of format version 1, without the activity section, still imports.
    const imported = await importInto(b, dave, await asVersion1(archive));
    expect(imported).toMatchObject({ status: 'done' });
    expect(imported.counts).toMatchObject({ users: 3, files: 5, records: 4 });
    expect(imported.counts).not.toHaveProperty('activity');

    // B's first instance holds the import now: no second one goes in.
    const refused = await api(b, carol).post('/api/v2.6/import');
    expect(refused.status).toBe(409);
    expect(refused.body.error).toEqual(expect.any(String));
  });

  it('runs one export per instance at a time, answers only the owner, and 404s unknown ids', async () => {
    // B's second cluster has no export worker for this instance's first export yet: stop ours first.
    const erin = await signUp(b.app, 'erin');
    await b.db.pool.query(
      `INSERT INTO "PortabilityJob" ("instanceId", "id", "kind", "status") SELECT "instanceId", gen_random_uuid(), 'export', 'running' FROM "User" WHERE "id" = $1::uuid`,
      [erin.userId],
    );
    const second = await api(b, erin).post('/api/v2.6/export');
    expect(second.status).toBe(409);
    const listed = await api(b, erin).get('/api/v2.6/export');
    expect(listed.status).toBe(200);
    expect(listed.body).toHaveLength(1);
    expect((await api(b, erin).get('/api/v2.6/export/6d1f7c3e-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await api(b, erin).get('/api/v2.6/export/not-an-id')).status).toBe(404);
    const user = await addUser(b.app, erin, 'frank');
    const asUser = request(b.app).post('/api/v2.6/export').set('Host', erin.address).set('X-Auth-Token', user.token);
    expect((await asUser).status).toBe(403);
  });
});
