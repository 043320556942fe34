// Every statement the product sends while a gateway is driven through its features (captured by the
// hook in packages/db/src/sql.ts) must run unchanged on Citus, each change on one shard: PostgreSQL's own
// analyzer reads each one and citus-rules.ts names what Citus 13.2 would refuse or split into steps.
import pg from 'pg';
import request from 'supertest';
import type { SigningKeys } from '@pds/tokens';
import {
  databaseChecks,
  EventRepository,
  FileRepository,
  FileUploadRepository,
  InstanceErasureRepository,
  InstanceRepository,
  GatewayDexStateRepository,
  InstanceAdminRepository,
  listenToStatements,
  PasswordResetRepository,
  PortabilityRepository,
  resealInstanceKeys,
  TotpRepository,
  UsageRepository,
  UserRepository,
  SYSTEM,
  WebhookRepository,
} from '@pds/db';
import { addUser, callerRequests, signUp, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { appRecord, installApp, startGatewayWithDex } from '../../../apps/gateway/test/apps-fixtures';
import { call, getBytes, putBytes, uploadFile } from '../../../apps/gateway/test/files-support';
import { create, head, newFile, patch, uploadResumably, VERSION } from '../../../apps/gateway/test/tus-support';
import { exportArchiveProcessor } from '../../../apps/gateway/src/jobs/export-archive';
import { exportSweepProcessor } from '../../../apps/gateway/src/jobs/export-sweep';
import { importArchiveProcessor } from '../../../apps/gateway/src/jobs/import-archive';
import { CitusStatementCheck, tenantTables } from './citus-rules';

let gw: TestGateway;
let dex: SigningKeys;
let tenant: string[];
let check: CitusStatementCheck;

beforeAll(async () => {
  ({ gw, dex } = await startGatewayWithDex());
  const client = new pg.Client({ connectionString: gw.databaseUrl });
  await client.connect();
  try {
    tenant = await tenantTables(client);
  } finally {
    await client.end();
  }
  check = await CitusStatementCheck.connect(gw.databaseUrl);
});
afterAll(async () => {
  await check.close();
  await gw.close();
});

// As the product sent them when a Citus 13.2 coordinator refused them (issue 30): files.ts
// SET_PUBLIC_MANY and updateFile(COMPLETE…) with FILE_PERMISSIONS, users.ts LATER_THAN_EVERY_SESSION in
// endSessions, instance-admin.ts STATE_CHANGE, usage.ts STATUS; and a change with its event in one statement.
const SET_PUBLIC_MANY = `WITH f AS (
    UPDATE "File" SET "contentPublic" = $3, "lastUpdated" = $4::timestamptz
    WHERE "instanceId" = $1::uuid AND "fileId" = ANY($2::text[]) RETURNING *
  ),
  "evOut" AS (
    INSERT INTO "Event" ("instanceId", "type", "actorKind", "actorId", "object", "address", "at")
    SELECT $1::uuid, CASE WHEN $3 THEN 'file.public' ELSE 'file.private' END, $5, $6::uuid, jsonb_build_object('fileId', "fileId"), $7, $8::timestamptz FROM f
    RETURNING "id"
  )
  SELECT f."instanceId", f."fileId", f."name", f."source", f."tags", f."title", f."description",
  f."status", f."size", f."contentPublic", f."thumbnail", f."uploaderId", f."dateCreated", f."lastUpdated", f."createdAt",
  f."trashedAt", COALESCE((SELECT json_agg(json_build_object('userId', p."userId", 'contentReadable', p."contentReadable") ORDER BY p."userId")
    FROM "FilePermission" p WHERE p."instanceId" = f."instanceId" AND p."fileId" = f."fileId"), '[]'::json) AS "permissions" FROM f`;
const COMPLETE = `WITH f AS (
    UPDATE "File" SET "status" = 'Completed', "size" = $3, "lastUpdated" = $4::timestamptz WHERE "instanceId" = $1::uuid AND "fileId" = $2 AND "status" <> 'Deleted' RETURNING *
  ),
  "evOut" AS (
    INSERT INTO "Event" ("instanceId", "type", "actorKind", "actorId", "object", "address", "at")
    SELECT $1::uuid, 'file.completed', $5, $6::uuid, jsonb_build_object('fileId', "fileId"), $7, $8::timestamptz FROM f
    RETURNING "id"
  )
  SELECT f."instanceId", f."fileId", f."name", f."source", f."tags", f."title", f."description",
  f."status", f."size", f."contentPublic", f."thumbnail", f."uploaderId", f."dateCreated", f."lastUpdated", f."createdAt",
  f."trashedAt", COALESCE((SELECT json_agg(json_build_object('userId', p."userId", 'contentReadable', p."contentReadable") ORDER BY p."userId")
    FROM "FilePermission" p WHERE p."instanceId" = f."instanceId" AND p."fileId" = f."fileId"), '[]'::json) AS "permissions" FROM f`;
const END_SESSIONS = `UPDATE "User" SET "tokensValidAfter" = GREATEST($3::timestamptz, "tokensValidAfter" + interval '1 second') WHERE "instanceId" = $1::uuid AND "id" = $2::uuid`;
const STATE_CHANGE = `UPDATE "Instance" SET "state" = $2::"InstanceState", "stateReason" = $3, "stateChangedAt" = $4::timestamptz,
    "closeAfter" = $6::timestamptz
  WHERE "address" = $1 AND "state"::text = ANY($5::text[]) AND ("closeAfter" IS NULL OR "closeAfter" > $4::timestamptz)
  RETURNING "id", "address"`;
const STATUS = `SELECT i."quotaBytes"::text AS "quotaBytes", i."quotaRecordsBytes"::text AS "quotaRecordsBytes", i."lastActiveAt",
    (SELECT o."email" FROM "User" o WHERE o."instanceId" = i."id" AND o."kind" = 'owner' LIMIT 1) AS "ownerEmail",
    coalesce(u."files", 0)::text AS "files", coalesce(u."fileBytes", 0)::text AS "fileBytes",
    coalesce(u."records", 0)::text AS "records", coalesce(u."recordBytes", 0)::text AS "recordBytes"
  FROM "Instance" i LEFT JOIN (SELECT s."instanceId", sum(s."files") AS "files", sum(s."fileBytes") AS "fileBytes",
    sum(s."records") AS "records", sum(s."recordBytes") AS "recordBytes"
  FROM "InstanceUsage" s WHERE s."instanceId" = $1::uuid GROUP BY s."instanceId") u ON u."instanceId" = i."id"
  WHERE i."id" = $1::uuid`;
const SET_DISABLED = `WITH "changed" AS (
    UPDATE "User" SET "disabled" = $3 WHERE "instanceId" = $1::uuid AND "id" = $2::uuid RETURNING "id", "instanceId", "username", "email", "fullName", "passwordHash", "kind", "disabled", "createdAt", "tokensValidAfter", "totpEnabled"
  ),
  "evOut" AS (
    INSERT INTO "Event" ("instanceId", "type", "actorKind", "actorId", "object", "address", "at")
    SELECT $1::uuid, CASE WHEN $3 THEN 'user.disabled' ELSE 'user.enabled' END, $4, $5::uuid, jsonb_build_object('userId', "id", 'username', "username", 'kind', "kind"), $6, $7::timestamptz FROM "changed"
    RETURNING "id"
  )
  SELECT * FROM "changed"`;

const IN_STEPS = 'Citus runs it as a step through the coordinator';
const EVENT_IN_CTE = `the CTE "evOut" is an INSERT: ${IN_STEPS} (write it as a statement of its own)`;
const PERMISSIONS_OVER_CTE = [
  `the CTE "f" changes rows in a statement with "FilePermission" p not pinned to the bound instance id: ${IN_STEPS}`,
  EVENT_IN_CTE,
  'the statement has a correlated subquery while its FROM holds no tenant table, only the CTE "f"; Citus cannot push it down',
];

describe('the statement check, rule by rule: what Citus refused, and what it runs', () => {
  it.each([
    ['a correlated subquery over a data-modifying CTE (files.ts SET_PUBLIC_MANY)', SET_PUBLIC_MANY, PERMISSIONS_OVER_CTE],
    [
      'a correlated subquery over a data-modifying CTE, without an event',
      `WITH f AS (UPDATE "File" SET "status" = 'Deleted' WHERE "instanceId" = $1::uuid AND "fileId" = $2 RETURNING *)
        SELECT f."fileId", (SELECT json_agg(p."userId") FROM "FilePermission" p WHERE p."instanceId" = f."instanceId") FROM f`,
      [PERMISSIONS_OVER_CTE[0], PERMISSIONS_OVER_CTE[2]],
    ],
    [
      'the same subquery pinned to the bound instance id: one shard, router-planned',
      `WITH f AS (UPDATE "File" SET "status" = 'Deleted' WHERE "instanceId" = $1::uuid AND "fileId" = $2 RETURNING *)
        SELECT f."fileId", (SELECT json_agg(p."userId") FROM "FilePermission" p WHERE p."instanceId" = $1::uuid AND p."fileId" = f."fileId") FROM f`,
      [],
    ],
    [
      'a STABLE operator on a column in SET (users.ts LATER_THAN_EVERY_SESSION)',
      END_SESSIONS,
      ['UPDATE "User": SET "tokensValidAfter" calls STABLE operator + (timestamptz_pl_interval) on a column'],
    ],
    [
      'the time computed from bound values only',
      `UPDATE "User" SET "tokensValidAfter" = GREATEST($3::timestamptz, "tokensValidAfter") WHERE "instanceId" = $1::uuid AND "id" = $2::uuid`,
      [],
    ],
    [
      'an enum cast in RETURNING (what Prisma sent at sign-up)',
      'INSERT INTO "Instance" ("id", "address") VALUES ($1, $2) RETURNING "id", "dexState"::text',
      ['INSERT INTO "Instance": RETURNING calls STABLE cast enum_out(): return columns only'],
    ],
    [
      'now() in a write and to_char in RETURNING',
      'UPDATE "File" SET "lastUpdated" = now() WHERE "instanceId" = $1 RETURNING "fileId", to_char("lastUpdated", $2)',
      ['writes with now(): pass the value as a parameter', 'UPDATE "File": RETURNING calls STABLE to_char(): return columns only'],
    ],
    [
      'bound time, columns returned',
      'UPDATE "File" SET "lastUpdated" = $2::timestamptz WHERE "instanceId" = $1::uuid RETURNING "fileId", "lastUpdated"',
      [],
    ],
    [
      'an enum-to-text cast on a column in the WHERE of a reference table write (instance-admin.ts STATE_CHANGE)',
      STATE_CHANGE,
      ['UPDATE "Instance": WHERE calls STABLE cast enum_out() on a column'],
    ],
    [
      'the states compared as the enum',
      STATE_CHANGE.replace(`"state"::text = ANY($5::text[])`, `"state" = ANY($5::"InstanceState"[])`),
      [],
    ],
    [
      'tenant tables joined through the reference table (usage.ts STATUS)',
      STATUS,
      ['tenant tables not joined on "instanceId" (equal on both sides): "InstanceUsage" s | "User" o; pin each to the bound instance id'],
    ],
    ['each pinned to the bound instance id', STATUS.replace(`o."instanceId" = i."id"`, `o."instanceId" = $1::uuid`), []],
    [
      'one tenant table joined with the reference table, across instances (a sweep)',
      `SELECT f."instanceId", i."address", f."fileId" FROM "File" f JOIN "Instance" i ON i."id" = f."instanceId" WHERE f."status" = 'New' LIMIT $1`,
      [],
    ],
    ['a change and its event in one statement', SET_DISABLED, [EVENT_IN_CTE]],
    ['a change and its event, the permissions read per row (files.ts updateFile COMPLETE)', COMPLETE, PERMISSIONS_OVER_CTE],
    [
      'the change alone, returning its columns',
      `UPDATE "User" SET "disabled" = $3 WHERE "instanceId" = $1::uuid AND "id" = $2::uuid RETURNING "id", "disabled"`,
      [],
    ],
    [
      'its event as a statement of its own',
      `INSERT INTO "Event" ("instanceId", "type", "actorKind", "actorId", "object", "address", "at")
        VALUES ($1::uuid, $2, $3, $4::uuid, $5::jsonb, $6, $7::timestamptz)`,
      [],
    ],
    [
      'a tenant table not filtered on instanceId',
      'UPDATE "File" SET "status" = $2 WHERE "fileId" = $1',
      ['"File" is not filtered or joined on "instanceId"'],
    ],
    ['a delete not filtered on instanceId', 'DELETE FROM "User" WHERE "id" = $1', ['"User" is not filtered or joined on "instanceId"']],
    [
      'a join not on instanceId',
      'SELECT f."fileId" FROM "File" f JOIN "FilePermission" p ON p."fileId" = f."fileId" WHERE f."instanceId" = $1',
      [
        '"FilePermission" p is not filtered or joined on "instanceId"',
        'tenant tables not joined on "instanceId" (equal on both sides): "File" f | "FilePermission" p; pin each to the bound instance id',
      ],
    ],
    [
      "a subquery joined on the outer row's instanceId (files.ts FILE_PERMISSIONS before)",
      `SELECT f."fileId", (SELECT count(*) FROM "FilePermission" p WHERE p."instanceId" = f."instanceId" AND p."fileId" = f."fileId")
        FROM "File" f WHERE f."instanceId" = $1::uuid`,
      ['"FilePermission" p not pinned to the bound instance id in a statement of one instance: Citus sends it to every shard'],
    ],
    [
      'the subquery pinned to the bound instance id',
      `SELECT f."fileId", (SELECT count(*) FROM "FilePermission" p WHERE p."instanceId" = $1::uuid AND p."fileId" = f."fileId")
        FROM "File" f WHERE f."instanceId" = $1::uuid`,
      [],
    ],
    [
      'the join on instanceId too',
      'SELECT f."fileId" FROM "File" f JOIN "FilePermission" p ON p."instanceId" = f."instanceId" AND p."fileId" = f."fileId" WHERE f."instanceId" = $1',
      [],
    ],
    [
      'an INSERT without instanceId',
      'INSERT INTO "DataGrant" ("userId", "namespace") VALUES ($1, $2)',
      ['INSERT INTO "DataGrant" does not write "instanceId"'],
    ],
  ])('%s', async (_shape, text, problems) => {
    expect(await check.problems(text)).toEqual(problems);
  });

  it('names a statement PostgreSQL cannot read at all', async () => {
    expect(await check.problems('SELECT "nope" FROM "File" WHERE "instanceId" = $1')).toEqual([
      'PostgreSQL cannot read it: column "nope" does not exist',
    ]);
  });
});

describe('what the gateway sends through a journey over every feature', () => {
  it('runs on Citus as it is, each change on one shard: no statement breaks a rule', async () => {
    const sent = new Set<string>();
    listenToStatements((text) => sent.add(text));
    try {
      await journey();
    } finally {
      listenToStatements(undefined);
    }

    const refused: { text: string; problems: string[] }[] = [];
    for (const text of sent) {
      const problems = await check.problems(text);
      if (problems.length > 0) refused.push({ text: text.replace(/\s+/g, ' '), problems });
    }
    expect(refused).toEqual([]);
    // The journey reached every tenant table, so the check covered each of them.
    expect(tenant.filter((table) => ![...sent].some((text) => text.includes(`"${table}"`)))).toEqual([]);
    expect(sent.size).toBeGreaterThan(60);
    // A journey over every feature, then a check of each of its 200-odd statements: longer than one call.
  }, 180_000);
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
  await sweeps(alice);
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
  const cursor = Buffer.from(JSON.stringify([new Date().toISOString(), 'journey.png'])).toString('base64url');
  await call(gw, 'get', '/photos?take=1', as).expect(200);
  await call(gw, 'get', `/photos?take=1&cursor=${cursor}`, as).expect(200);
  await call(gw, 'get', `/photos?cursor=${cursor}`, asCarol).expect(200);
  const other = await uploadFile(gw, as, { name: 'other.txt', source: 'citus' });
  const both = [file.fileId, other.fileId];
  await call(gw, 'post', '/bulk', as, { fileIds: both, action: 'share', userId: carol.userId }).expect(200);
  await call(gw, 'post', '/bulk', as, { fileIds: both, action: 'unshare', userId: carol.userId }).expect(200);
  await call(gw, 'post', '/bulk', as, { fileIds: both, action: 'public' }).expect(200);
  await call(gw, 'post', '/archive', as, { fileIds: both }).expect(200);
  await links(alice, both);
  await call(gw, 'post', '/bulk', as, { fileIds: [other.fileId], action: 'delete' }).expect(200);
  await call(gw, 'delete', `/file/${file.fileId}`, as).expect(200);
  await call(gw, 'post', '/upload', as, { name: 'abandoned.txt', source: 'citus' }).expect(200);
  await resumable(alice);
}

/** Resumable (tus) uploads: created, resumed, taken over, completed, terminated, one of a deleted file; the sweep's reads. */
async function resumable(alice: SignedUp): Promise<void> {
  const as = { address: alice.address, token: alice.token };
  const { fileId, location } = await uploadResumably(gw, as, Buffer.from('bytes'));
  await head(gw, alice.address, location).expect(200);
  await call(gw, 'put', `/file/${fileId}/complete`, as).expect(200);
  const cut = await newFile(gw, as);
  const terminated = (await create(gw, alice.address, 10, { fileId: cut.fileId }, alice.token).expect(201)).headers.location as string;
  await patch(gw, alice.address, terminated, 0, Buffer.from('01234')).expect(204);
  await head(gw, alice.address, terminated).expect(200);
  await request(gw.app).delete(new URL(terminated).pathname).set('Host', alice.address).set(VERSION).expect(204);
  const deleted = (await create(gw, alice.address, 10, { contentUrl: cut.contentUrl }).expect(201)).headers.location as string;
  await call(gw, 'delete', `/file/${cut.fileId}`, as).expect(200);
  await head(gw, alice.address, deleted).expect(404);
  const uploads = new FileUploadRepository(gw.db);
  const later = new Date(Date.now() + 3_600_000);
  await uploads.ended(later, later, 10);
  await uploads.liveIds(['0'.repeat(64)]);
}

/** Share links: made, listed, opened with a password, viewed, downloaded (one file and a zip), revoked. */
async function links(alice: SignedUp, fileIds: string[]): Promise<void> {
  const as = { address: alice.address, token: alice.token };
  const made = await call(gw, 'post', '/links', as, { fileIds, password: 'journey-password', downloadLimit: 5 }).expect(201);
  await call(gw, 'post', '/links', as, { template: { source: 'citus' } }).expect(201);
  await call(gw, 'get', `/links?fileId=${fileIds[0]}`, as).expect(200);
  const path = new URL(made.body.url as string).pathname;
  const unlocked = await request(gw.app)
    .post(path)
    .set('Host', alice.address)
    .set('Accept', 'text/html')
    .type('form')
    .send({ password: 'journey-password' })
    .expect(303);
  const cookie = (unlocked.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0]!;
  const visit = (to: string) => request(gw.app).get(to).set('Host', alice.address).set('Cookie', cookie);
  await visit(path).expect(200);
  await visit(`${path}/download/${fileIds[0]}`).expect(303);
  await visit(`${path}/download`).expect(200);
  await call(gw, 'delete', `/links/${made.body.id}`, as).expect(200);
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
  await files.setThumbnail(abandoned[0]!.instanceId, 'journey.png', {
    width: 320,
    height: 200,
    taken: { at: new Date('2026-01-02T03:04:05Z'), local: new Date('2026-01-02T12:04:05Z') },
  });
  const dexState = new GatewayDexStateRepository(gw.db);
  for (const address of await dexState.pendingAddresses()) await dexState.set(address, 'registered');
  for (const check of Object.values(databaseChecks('gateway', gw.db))) await check();
}

/**
 * What the jobs and tools send that the journey above does not reach: the trash, its moves and its purge, a New
 * file deleted, event numbering, usage and status, key rotation, and the erasure of a closed instance.
 */
async function sweeps(alice: SignedUp): Promise<void> {
  const instanceId = (await gw.registry.resolve(alice.address))!.instance.id;
  const as = { address: alice.address, token: alice.token };
  const files = new FileRepository(gw.db);
  const { fileId } = await uploadFile(gw, as, { name: 'trash.txt', source: 'citus' });
  expect(await files.trash(instanceId, fileId, new Date(), SYSTEM)).not.toBeNull();
  // Its objects' move, as the worker resumes one a crash cut short.
  expect(await files.unsettled(10)).toContainEqual({ instanceId, address: alice.address, fileId });
  expect(await files.settle(instanceId, fileId, async () => undefined)).toBe(true);
  await files.trashed(instanceId, { take: 10, skip: 0 });
  expect(await files.restore(instanceId, fileId, new Date(), SYSTEM)).not.toBeNull();
  await files.trash(instanceId, fileId, new Date(), SYSTEM);
  expect(await files.trashedBefore(new Date(Date.now() + 3_600_000), 10)).not.toEqual([]);
  expect(await files.purge(instanceId, fileId, SYSTEM)).not.toBeNull();
  const started = await call(gw, 'post', '/upload', as, { name: 'never.txt', source: 'citus' }).expect(200);
  expect(await files.markDeleted(instanceId, started.body.fileId as string, new Date(), SYSTEM)).not.toBeNull();
  await files.findAll(instanceId, [fileId]);

  const events = new EventRepository(gw.db);
  await new WebhookRepository(gw.db).subscribedInstances();
  await events.numberPending([instanceId]);
  await events.number(instanceId);
  const usage = new UsageRepository(gw.db);
  await usage.find(instanceId);
  expect(await usage.status(instanceId)).not.toBeNull();
  await usage.totals();
  await usage.verify();
  const instances = new InstanceRepository(gw.db);
  await instances.takenAddresses([alice.address]);
  await instances.findById(instanceId);
  await resealInstanceKeys(gw.db, (sealed) => sealed);

  const frank = await signUp(gw.app, 'frank');
  const closing = { state: 'closing' as const, reason: 'journey', actor: 'operator', at: new Date() };
  await new InstanceAdminRepository(gw.db).changeState(frank.address, ['active'], closing, new Date(Date.now() + 1000));
  const erasure = new InstanceErasureRepository(gw.db);
  const [due] = await erasure.due(new Date(Date.now() + 60_000), 10);
  expect(due?.address).toBe(frank.address);
  await erasure.erase(due!, new Date());
}
