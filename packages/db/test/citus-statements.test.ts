// Every statement the product sends while a gateway is driven through its features, captured by the
// hook in packages/db/src/sql.ts, must run unchanged on tables distributed by "instanceId": each use of
// a tenant table filtered or joined on it, RETURNING clauses that list columns (no enum cast, now() or
// to_char for Citus to refuse), and times and ids bound as values in writes.
import pg from 'pg';
import type { SigningKeys } from '@pds/tokens';
import {
  databaseChecks,
  EventRepository,
  FileRepository,
  GatewayDexStateRepository,
  InstanceAdminRepository,
  listenToStatements,
  PasswordResetRepository,
  PortabilityRepository,
  TotpRepository,
  UserRepository,
  SYSTEM,
  WebhookRepository,
} from '@pds/db';
import { addUser, callerRequests, signUp, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { appRecord, installApp, startGatewayWithDex } from '../../../apps/gateway/test/apps-fixtures';
import { call, getBytes, putBytes, uploadFile } from '../../../apps/gateway/test/files-support';
import { exportArchiveProcessor } from '../../../apps/gateway/src/jobs/export-archive';
import { exportSweepProcessor } from '../../../apps/gateway/src/jobs/export-sweep';
import { importArchiveProcessor } from '../../../apps/gateway/src/jobs/import-archive';
import { statementProblems, tenantTables } from './citus-rules';

let gw: TestGateway;
let dex: SigningKeys;
let tenant: string[];

beforeAll(async () => {
  ({ gw, dex } = await startGatewayWithDex());
  const client = new pg.Client({ connectionString: gw.databaseUrl });
  await client.connect();
  try {
    tenant = await tenantTables(client);
  } finally {
    await client.end();
  }
});
afterAll(() => gw.close());

describe('the statement check', () => {
  it.each([
    // What Prisma sent at sign-up, and Citus refused.
    [
      'INSERT INTO "Instance" ("id", "address") VALUES ($1, $2) RETURNING "id", "dexState"::text',
      [],
      ['RETURNING computes "dexState"::text'],
    ],
    ['UPDATE "File" SET "status" = $2 WHERE "fileId" = $1', ['File'], ['"File" is not filtered or joined on instanceId']],
    ['DELETE FROM "User" WHERE "id" = $1', ['User'], ['"User" is not filtered or joined on instanceId']],
    [
      'SELECT f."fileId" FROM "File" f JOIN "FilePermission" p ON p."fileId" = f."fileId" WHERE f."instanceId" = $1',
      ['File', 'FilePermission'],
      ['"FilePermission" p is not filtered or joined on instanceId'],
    ],
    [
      'INSERT INTO "DataGrant" ("userId", "namespace") VALUES ($1, $2)',
      ['DataGrant'],
      ['INSERT INTO "DataGrant" does not write instanceId'],
    ],
    [
      'UPDATE "File" SET "lastUpdated" = now() WHERE "instanceId" = $1 RETURNING "fileId", to_char("lastUpdated", $2)',
      ['File'],
      ['RETURNING computes to_char("lastUpdated", $2)', 'writes with now: pass the value as a parameter'],
    ],
  ])('finds what Citus would refuse in %s', (text, tables, problems) => {
    expect(statementProblems(text, tables)).toEqual(problems);
  });

  it('passes statements scoped to one instance that return columns', () => {
    const text = `WITH f AS (UPDATE "File" SET "status" = 'Deleted' WHERE "instanceId" = $1::uuid AND "fileId" = $2 RETURNING *)
      SELECT f."fileId", (SELECT json_agg(p."userId") FROM "FilePermission" p WHERE p."instanceId" = f."instanceId") FROM f`;
    expect(statementProblems(text, ['File', 'FilePermission'])).toEqual([]);
  });
});

describe('what the gateway sends through a journey over every feature', () => {
  it('filters or joins each tenant table on instanceId and computes nothing in RETURNING', async () => {
    const sent = new Set<string>();
    listenToStatements((text) => sent.add(text));
    try {
      await journey();
    } finally {
      listenToStatements(undefined);
    }

    const refused = [...sent].flatMap((text) => {
      const problems = statementProblems(text, tenant);
      return problems.length > 0 ? [{ text: text.replace(/\s+/g, ' '), problems }] : [];
    });
    expect(refused).toEqual([]);
    // The journey reached every tenant table, so the check covered each of them.
    expect(tenant.filter((table) => ![...sent].some((text) => text.includes(`"${table}"`)))).toEqual([]);
    expect(sent.size).toBeGreaterThan(60);
  });
});

/** Sign-up, accounts, files, apps, data records, links, grants, bundles, debits, the operator's and the workers' statements. */
async function journey(): Promise<void> {
  const alice = await signUp(gw.app, 'alice');
  const bob = await signUp(gw.app, 'bob');
  const carol = await addUser(gw.app, alice, 'carol');
  const owner = callerRequests(gw.app, alice, alice.address);
  await owner.get('/users/user').expect(200);
  await owner.put(`/users/user/${carol.userId}/disable`).expect(200);
  await owner.put(`/users/user/${carol.userId}/enable`).expect(200);
  const dave = await addUser(gw.app, alice, 'dave');
  await owner.delete(`/users/user/${dave.userId}`).expect(200);

  await files(alice, carol);
  const notes = await installApp(gw, dex, alice, appRecord('notes'));
  await owner.get('/api/v2.6/applications').expect(200);
  await data(alice, notes, carol);
  await events(alice, notes);
  await owner.post('/api/v2.6/applications/notes/disable').expect(200);
  await callerRequests(gw.app, bob, bob.address).get('/api/v2.6/data/notes/items').expect(200);
  await operator(bob);
  await accounts(bob);
  await portability(alice);
  await workers();
}

/** Password change and reset, sessions ended, the second factor: through the API, and the mail job's repositories. */
async function accounts(bob: SignedUp): Promise<void> {
  const owner = callerRequests(gw.app, bob, bob.address);
  const newPassword = 'purple-elephant-juggles-quietly-7';
  const changed = await owner.post('/control/v2/auth/password').send({ password: bob.password, newPassword }).expect(200);
  const again = callerRequests(gw.app, { token: changed.headers['x-auth-token'] as string }, bob.address);
  await again.post('/api/v2.6/auth/logout-everywhere').expect(200);
  await callerRequests(gw.app, bob, bob.address).post('/control/v2/auth/passwordReset').send({ email: 'bob@example.com' }).expect(200);
  await callerRequests(gw.app, bob, bob.address).post('/control/v2/auth/passwordreset/confirm/unknown').send({ newPassword }).expect(401);
  const users = new UserRepository(gw.db);
  const ownerRow = await users.findOwner((await new InstanceAdminRepository(gw.db).find(bob.address))!.id);
  const { instanceId, id } = ownerRow!;
  const resets = new PasswordResetRepository(gw.db);
  const expires = new Date(Date.now() + 3_600_000);
  await resets.replace(instanceId, id, 'hash', expires);
  await resets.find(instanceId, 'hash', new Date());
  await resets.use(instanceId, 'hash', new Date(), 'scrypt$…', expires);
  const totp = new TotpRepository(gw.db);
  await totp.enrol(instanceId, id, 'sealed');
  await totp.enable(instanceId, id, ['a', 'b']);
  await totp.state(instanceId, id);
  await totp.useStep(instanceId, id, 1);
  await totp.useRecoveryCode(instanceId, id, 'a');
  await totp.disable(instanceId, id);
}

/** Webhooks, the activity log (with the reads written in a batch), and what the delivery job and the sweep send. */
async function events(alice: SignedUp, notes: { token: string; userId: string }): Promise<void> {
  const app = callerRequests(gw.app, notes, alice.address);
  const hook = await app.post('/api/v2.6/applications/notes/webhooks').send({ url: 'https://notes.example/hook' }).expect(201);
  await app.get('/api/v2.6/applications/notes/webhooks').expect(200);
  const instanceId = (await gw.db.instance.findUniqueOrThrow({ where: { address: alice.address } })).id;
  const webhooks = new WebhookRepository(gw.db);
  await webhooks.due(10);
  await webhooks.failing(instanceId, hook.body.id, 'retrying', 'journey', new Date());
  await webhooks.advance(instanceId, hook.body.id, 0, 1);
  await app.delete(`/api/v2.6/applications/notes/webhooks/${hook.body.id}`).expect(200);
  const events = new EventRepository(gw.db);
  await events.after(instanceId, 0, 10);
  await events.lastOf([instanceId]);
  await new Promise((resolve) => setTimeout(resolve, 1200));
  await callerRequests(gw.app, alice, alice.address).get('/api/v2.6/activity?type=record.&take=5').expect(200);
  await events.instanceIds();
  await events.sweep(instanceId, new Date(0), 10);
}

/** An export of alice's instance through its job, imported into a new instance through its job, then the sweep. */
async function portability(alice: SignedUp): Promise<void> {
  const repository = new PortabilityRepository(gw.db);
  const job = (address: string, id: string, instanceId: string) => ({
    data: { instanceId, address, id },
    attemptsMade: 0,
    opts: { attempts: 1 },
  });
  const owner = callerRequests(gw.app, alice, alice.address);
  const started = await owner.post('/api/v2.6/export').expect(202);
  const aliceId = (await gw.registry.resolve(alice.address))!.instance.id;
  await exportArchiveProcessor({ repository, store: gw.blobStore, clock: gw.clock, ttlHours: 1 })(
    job(alice.address, started.body.exportId, aliceId),
  );
  await owner.get('/api/v2.6/export').expect(200);
  const ready = await owner.get(`/api/v2.6/export/${started.body.exportId}`).expect(200);
  const archive = (await getBytes(gw, ready.body.downloadUrl)).body;

  const erin = await signUp(gw.app, 'erin');
  const importer = callerRequests(gw.app, erin, erin.address);
  const created = await importer.post('/api/v2.6/import').expect(201);
  expect(await putBytes(gw, created.body.uploadUrl, archive)).toBe(200);
  await importer.put(`/api/v2.6/import/${created.body.importId}/complete`).expect(202);
  const erinId = (await gw.registry.resolve(erin.address))!.instance.id;
  await importArchiveProcessor({ repository, store: gw.blobStore, clock: gw.clock })(job(erin.address, created.body.importId, erinId));
  expect((await importer.get(`/api/v2.6/import/${created.body.importId}`).expect(200)).body.status).toBe('done');
  const later = () => new Date(gw.clock().getTime() + 2 * 3_600_000);
  await exportSweepProcessor({ repository, store: gw.blobStore, clock: later, ttlHours: 1 })();
}

/** The admin API's statements (the repository it calls): listing with usage, quotas, suspend and resume. */
async function operator(bob: SignedUp): Promise<void> {
  const instances = new InstanceAdminRepository(gw.db);
  expect((await instances.list({ query: 'bob', state: 'active', skip: 0, take: 10 })).total).toBe(1);
  const found = await instances.find(bob.address);
  await instances.setQuota(bob.address, { quotaBytes: 1024, quotaRecordsBytes: null });
  const change = { reason: 'journey', actor: 'operator', at: new Date() };
  expect(await instances.changeState(bob.address, ['active'], { ...change, state: 'suspended' })).toMatchObject({ changed: true });
  await instances.changeState(bob.address, ['active'], { ...change, state: 'suspended' });
  await instances.changeState(bob.address, ['suspended'], { ...change, state: 'active' });
  await instances.history(found!.id);
  await instances.countByState();
}

async function files(alice: SignedUp, carol: { userId: string; token: string }): Promise<void> {
  const as = { address: alice.address, token: alice.token };
  const file = await uploadFile(gw, as, { name: 'journey.txt', source: 'citus', tags: ['a'], title: 'A journey' });
  await uploadFile(gw, as, { name: 'journey.txt', source: 'citus' });
  await call(gw, 'get', `/file/${file.fileId}`, as).expect(200);
  await call(gw, 'get', `/content/${file.fileId}`, as).expect(303);
  await call(gw, 'post', '/search', as, { source: 'citus', tags: ['a'], title: 'journ' }).expect(200);
  await call(gw, 'put', `/file/${file.fileId}`, as, { name: 'renamed.txt', tags: ['b'], description: 'moved' }).expect(200);
  await call(gw, 'get', `/allowAccess/${file.fileId}/${carol.userId}?content=true`, as).expect(200);
  await call(gw, 'post', '/search', { address: alice.address, token: carol.token }, { source: 'citus' }).expect(200);
  await call(gw, 'get', `/restrictAccess/${file.fileId}/${carol.userId}`, as).expect(200);
  await call(gw, 'post', `/allowAccess/${carol.userId}`, as, { source: 'citus' }).expect(200);
  await call(gw, 'post', `/restrictAccess/${carol.userId}`, as, { source: 'citus' }).expect(200);
  await call(gw, 'get', `/allowAccessPublic/${file.fileId}`, as).expect(200);
  await call(gw, 'get', `/restrictAccessPublic/${file.fileId}`, as).expect(200);
  const asCarol = { address: alice.address, token: carol.token };
  await call(gw, 'get', '/listing?q=journey&type=text&tag=b&shared=false&public=false&sort=name', as).expect(200);
  await call(gw, 'get', '/listing?sort=size&order=asc', asCarol).expect(200);
  await call(gw, 'get', '/tags', as).expect(200);
  await call(gw, 'get', '/tags', asCarol).expect(200);
  const other = await uploadFile(gw, as, { name: 'other.txt', source: 'citus' });
  const both = [file.fileId, other.fileId];
  await call(gw, 'post', '/bulk', as, { fileIds: both, action: 'share', userId: carol.userId }).expect(200);
  await call(gw, 'post', '/bulk', as, { fileIds: both, action: 'unshare', userId: carol.userId }).expect(200);
  await call(gw, 'post', '/bulk', as, { fileIds: both, action: 'public' }).expect(200);
  await call(gw, 'post', '/archive', as, { fileIds: both }).expect(200);
  await call(gw, 'post', '/bulk', as, { fileIds: [other.fileId], action: 'delete' }).expect(200);
  await call(gw, 'delete', `/file/${file.fileId}`, as).expect(200);
  await call(gw, 'post', '/upload', as, { name: 'abandoned.txt', source: 'citus' }).expect(200);
}

async function data(alice: SignedUp, notes: { token: string; userId: string }, carol: { userId: string; token: string }): Promise<void> {
  const owner = callerRequests(gw.app, alice, alice.address);
  const app = callerRequests(gw.app, notes, alice.address);
  const written = await app
    .post('/api/v2.6/data/notes/items')
    .send([
      { text: 'run one', rank: 2 },
      { text: 'walk', rank: 1 },
    ])
    .expect(201);
  const [first, second] = (written.body as { recordId: string }[]).map((r) => r.recordId) as [string, string];
  await app.get('/api/v2.6/data/notes/items?orderBy=rank&ordering=descending&take=10').expect(200);
  await app.get('/api/v2.6/data/notes/items').expect(200);
  await app
    .put('/api/v2.6/data')
    .send([{ recordId: first, data: { text: 'run two', rank: 3 } }])
    .expect(201);
  await app.post(`/api/v2.6/data-link?records=${first}&records=${second}`).expect(201);
  await owner.get(`/api/v2.6/data-record/${first}`).expect(200);
  await owner
    .post('/api/v2.6/data-batch')
    .send([{ endpoint: 'notes/items', data: { text: 'batch' }, links: [{ endpoint: 'notes/places', data: { place: 'Lisbon' } }] }])
    .expect(201);
  await owner.get('/api/v2.6/data/sources').expect(200);
  await owner.delete(`/api/v2.6/data?records=${second}`).expect(200);
  await owner.get('/api/v2.6/data-count/notes/items').expect(200);
  await owner.post('/api/v2.6/data/scratch/items').send({ n: 1 }).expect(201);
  await owner.delete('/api/v2.6/data/scratch/items').expect(200);

  await owner.post('/api/v2.6/data-grants').send({ userId: carol.userId, namespace: 'notes', access: 'read' }).expect(201);
  await owner.get(`/api/v2.6/data-grants?userId=${carol.userId}`).expect(200);
  await callerRequests(gw.app, carol, alice.address).get('/api/v2.6/data/notes/items').expect(200);
  await owner.delete('/api/v2.6/data-grants').send({ userId: carol.userId, namespace: 'notes', access: 'read' }).expect(200);

  const bundle = {
    p: {
      endpoints: [
        {
          endpoint: 'notes/items',
          filters: [{ field: 'text', operator: { operator: 'find', search: 'run' } }],
          links: [{ endpoint: 'notes/places' }],
        },
      ],
      orderBy: 'rank',
    },
  };
  await owner.post('/api/v2.6/data-bundle/journey').send({ name: 'journey', bundle }).expect(201);
  await owner.get('/api/v2.6/data-bundle/journey').expect(200);
  const combinator = [{ endpoint: 'notes/items', filters: [{ field: 'rank', operator: { operator: 'between', lower: 1, upper: 3 } }] }];
  await owner.post('/api/v2.6/combinator/journey').send(combinator).expect(201);
  await owner.get('/api/v2.6/combinator/journey?orderBy=rank&skip=1&take=5').expect(200);
  await owner
    .put('/api/v2.6/profile')
    .send({ profile: { personal: { firstName: 'Alice' } }, published: ['personal.firstName'] })
    .expect(200);
  await owner.get('/api/v2.6/profile').expect(200);
  await owner.get('/api/v2.6/phata/profile').expect(200);
  const terms = {
    dataDebitKey: 'reader',
    purpose: 'Reading notes',
    start: gw.clock().toISOString(),
    period: 3600,
    termsUrl: 'https://reader.example/terms',
    cancelAtPeriodEnd: false,
    requestClientName: 'Reader',
    requestClientUrl: 'https://reader.example',
    requestClientLogoUrl: 'https://reader.example/logo.png',
    holderUserId: carol.userId,
    bundle: { name: 'reader-bundle', bundle: { notes: { endpoints: [{ endpoint: 'notes/items' }] } } },
  };
  await owner.post('/api/v2.6/data-debit/reader').send(terms).expect(201);
  await owner.get('/api/v2.6/data-debit/reader/enable').expect(200);
  await callerRequests(gw.app, carol, alice.address).get('/api/v2.6/data-debit/reader/values').expect(200);
  await owner
    .put('/api/v2.6/data-debit/reader')
    .send({ ...terms, purpose: 'Reading more' })
    .expect(200);
  await owner.get('/api/v2.6/data-debit').expect(200);
  await owner.get('/api/v2.6/data-debit/reader/disable').expect(200);
}

/** The workers' statements: the upload sweep and dex registration's bookkeeping. */
async function workers(): Promise<void> {
  const files = new FileRepository(gw.db);
  const later = new Date(Date.now() + 3_600_000);
  const abandoned = await files.abandonedUploads(later, 10);
  expect(abandoned.length).toBeGreaterThan(0);
  await files.liveFiles(abandoned.map(({ address, fileId }) => ({ address, fileId })));
  for (const upload of abandoned) await files.removeAbandoned(upload.instanceId, upload.fileId, later, async () => undefined, SYSTEM);
  await files.setThumbnail(abandoned[0]!.instanceId, 'journey.png', true);
  const dexState = new GatewayDexStateRepository(gw.db);
  for (const address of await dexState.pendingAddresses()) await dexState.set(address, 'registered');
  for (const check of Object.values(databaseChecks('gateway', gw.db))) await check();
}
