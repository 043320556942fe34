// The first page of each paged read is a prepared statement whose generic plan PostgreSQL keeps, so a
// connection plans it a few times and then only executes it. With `OFFSET $n` in the text, PostgreSQL
// priced the generic plan above a custom one and planned the statement again on every execution
// (pageClause, packages/db/src/sql.ts). Later pages still read the right rows.
import { createGatewayDb, DataRecordRepository, FileRepository, ShareLinkRepository, type GatewayDb } from '@pds/db';
import { callerRequests, signUp, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { startFilesGateway, uploadFile } from './files-support';

/** Executions of each read: PostgreSQL tries five custom plans before it weighs the generic one. */
const EXECUTIONS = 8;

let gw: TestGateway;
let alice: SignedUp;
let instanceId: string;
/** One connection: the statements below are prepared on it, and pg_prepared_statements is its own. */
let db: GatewayDb;

beforeAll(async () => {
  gw = await startFilesGateway('local');
  alice = await signUp(gw.app, 'alice');
  const as = { address: alice.address, token: alice.token };
  for (const name of ['a.txt', 'b.txt']) await uploadFile(gw, as, { name, source: 'test' });
  const owner = callerRequests(gw.app, alice, alice.address);
  await owner
    .post('/api/v2.6/data/notes/daily')
    .send([{ n: 1 }, { n: 2 }, { n: 3 }])
    .expect(201);
  instanceId = (await gw.db.pool.query<{ id: string }>(`SELECT "id" FROM "Instance" WHERE "address" = $1`, [alice.address])).rows[0]!.id;
  db = createGatewayDb(gw.databaseUrl, { max: 1 });
});
afterAll(async () => {
  await db.$disconnect();
  await gw.close();
});

/** How the connection planned each prepared statement that ran at least EXECUTIONS times. */
async function plansOf(): Promise<{ statement: string; generic: number; custom: number }[]> {
  const { rows } = await db.pool.query<{ statement: string; generic: string; custom: string }>(
    `SELECT "statement", "generic_plans" AS "generic", "custom_plans" AS "custom" FROM pg_prepared_statements
     WHERE "generic_plans" + "custom_plans" >= $1`,
    [EXECUTIONS],
  );
  return rows.map((row) => ({ statement: row.statement, generic: Number(row.generic), custom: Number(row.custom) }));
}

it('keeps the generic plan of the first page of a search, a table read, the trash and the share links', async () => {
  const files = new FileRepository(db);
  const records = new DataRecordRepository(db);
  const links = new ShareLinkRepository(db);
  const first = { take: 50, skip: 0 };
  for (let i = 0; i < EXECUTIONS; i++) {
    expect((await files.search(instanceId, { name: 'a.txt' }, { all: true }, first)).map((f) => f.name)).toEqual(['a.txt']);
    expect((await records.find(instanceId, 'notes', 'daily', { descending: false, ...first })).map((r) => r.data)).toEqual([
      { n: 1 },
      { n: 2 },
      { n: 3 },
    ]);
    expect(await files.trashed(instanceId, first)).toEqual([]);
    expect(await links.list(instanceId, undefined, first)).toEqual([]);
    expect(await links.list(instanceId, 'a-file', first)).toEqual([]);
  }
  const plans = await plansOf();
  expect(plans.map((plan) => plan.statement)).toEqual(
    expect.arrayContaining([
      expect.stringContaining('f."name" = $2'),
      expect.stringContaining('FROM "DataRecord"'),
      expect.stringContaining('"trashedAt" IS NOT NULL'),
      expect.stringMatching(/FROM "ShareLink" l WHERE l."instanceId" = \$1::uuid\s+ORDER BY/),
      expect.stringContaining('x."fileId" = $2'),
    ]),
  );
  // Each planned for its values no more than the five times PostgreSQL always tries, then generically.
  for (const plan of plans)
    expect({ statement: plan.statement, planned: plan.custom <= 5 && plan.generic > 0 }).toEqual({
      statement: plan.statement,
      planned: true,
    });
});

it('reads a later page with its OFFSET', async () => {
  const files = new FileRepository(db);
  const records = new DataRecordRepository(db);
  expect(await files.search(instanceId, { name: 'a.txt' }, { all: true }, { take: 50, skip: 1 })).toEqual([]);
  const both = (await files.search(instanceId, {}, { all: true }, { take: 2, skip: 0 })).map((f) => f.name);
  expect([...both].sort()).toEqual(['a.txt', 'b.txt']);
  expect((await files.search(instanceId, {}, { all: true }, { take: 1, skip: 1 })).map((f) => f.name)).toEqual([both[1]]);
  expect((await records.find(instanceId, 'notes', 'daily', { descending: true, take: 1, skip: 1 })).map((r) => r.data)).toEqual([{ n: 2 }]);
  expect(
    (await records.find(instanceId, 'notes', 'daily', { descending: false, orderBy: ['n'], take: 2, skip: 2 })).map((r) => r.data),
  ).toEqual([{ n: 3 }]);
});
