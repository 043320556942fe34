// The one query path (sql.ts, batch.ts) against real PostgreSQL: a prepared statement's rows are parsed
// by the shape its connection asked for once, whichever statements share the connection; errors
// PostgreSQL answers leave the connection in use, and a connection cut under a statement or a
// transaction fails that call only, not the process.
import { createGatewayDb, postgresErrorCode, type GatewayDb } from '@pds/db';
import { sqlOn, transaction, type Sql } from '../src/sql';
import { dropDatabase, ensureDatabase } from '../../../scripts/lib/postgres';
import { CuttingProxy } from '../../../test/support/cutting-proxy';
import { requireEnv } from '../../../test/support/gateway';

const NAME = `pds_sql_${Math.random().toString(36).slice(2, 10)}`;
let url: string;
let db: GatewayDb;
let sql: Sql;

const ITEM = 'SELECT id, big, flag, tags, note, at, doc FROM item WHERE id = $1';
const LABEL = 'SELECT label, id AS "itemId" FROM item WHERE id = $1';

beforeAll(async () => {
  url = await ensureDatabase(requireEnv('TEST_PG_ADMIN_URL'), NAME);
  // One connection: every statement below shares it, each described on it once.
  db = createGatewayDb(url, { max: 1 });
  sql = sqlOn(db.pool);
  await sql.plain(
    `CREATE TABLE item (id int PRIMARY KEY, big bigint, flag boolean, tags text[], note text, at timestamptz, doc jsonb, label text)`,
    [],
  );
  await sql.plain(
    `INSERT INTO item VALUES (1, 9007199254740993, true, '{a,"b c"}', NULL, '2026-11-29T10:00:00Z', '{"k": [1]}', 'one'),
                             (2, 2, false, '{}', 'two', NULL, 'null', 'two')`,
    [],
  );
});

afterAll(async () => {
  await db.$disconnect();
  await dropDatabase(requireEnv('TEST_PG_ADMIN_URL'), NAME);
});

const FIRST = {
  id: 1,
  big: '9007199254740993',
  flag: true,
  tags: ['a', 'b c'],
  note: null,
  at: new Date('2026-11-29T10:00:00Z'),
  doc: { k: [1] },
};
const SECOND = { id: 2, big: '2', flag: false, tags: [], note: 'two', at: null, doc: null };

it('parses a prepared statement’s rows by their types, the first time and every time after', async () => {
  for (let i = 0; i < 3; i++) {
    expect(await sql.prepared(ITEM, [1])).toEqual([FIRST]);
    expect(await sql.prepared(ITEM, [2])).toEqual([SECOND]);
    expect(await sql.prepared(ITEM, [3])).toEqual([]);
  }
});

it('keeps each statement’s own shape on a connection that runs several', async () => {
  for (let i = 0; i < 3; i++) {
    expect(await sql.prepared(LABEL, [1])).toEqual([{ label: 'one', itemId: 1 }]);
    expect(await sql.prepared(ITEM, [2])).toEqual([SECOND]);
  }
  expect(db.pool.totalCount).toBe(1);
});

it('answers every statement of a batch in order, rows and counts, described or not', async () => {
  for (let i = 0; i < 2; i++) {
    const answers = await sql.batch([
      { name: 'label', text: LABEL, values: [2] },
      { name: 'touch', text: 'UPDATE item SET note = note WHERE id <= $1', values: [2] },
      { name: 'item', text: ITEM, values: [1] },
    ]);
    expect(answers).toEqual([
      { rows: [{ label: 'two', itemId: 2 }], rowCount: 1 },
      { rows: [], rowCount: 2 },
      { rows: [FIRST], rowCount: 1 },
    ]);
  }
  expect(await sql.count('UPDATE item SET note = note WHERE id = $1', [2])).toBe(1);
});

it('rejects with PostgreSQL’s error and keeps the connection for the next statement', async () => {
  const refused = await sql.prepared('SELECT 1 / $1::int AS q', [0]).catch((error: unknown) => error);
  expect(postgresErrorCode(refused)).toBe('22012');
  const before = await sql.prepared<{ pid: number }>('SELECT pg_backend_pid() AS pid', []);
  await expect(sql.batch([{ name: 'dup', text: 'INSERT INTO item (id) VALUES ($1)', values: [1] }])).rejects.toMatchObject({
    code: '23505',
  });
  expect(await sql.prepared('SELECT pg_backend_pid() AS pid', [])).toEqual(before);
  expect(await sql.prepared(ITEM, [1])).toEqual([FIRST]);
});

describe('a connection cut under a call', () => {
  let proxy: CuttingProxy;
  let cut: GatewayDb;

  beforeAll(async () => {
    proxy = await CuttingProxy.start();
    const target = new URL(url);
    proxy.forwardTo(Number(target.port || 5432));
    target.hostname = '127.0.0.1';
    target.port = String(proxy.port);
    cut = createGatewayDb(target.toString(), { max: 2 });
  });

  afterAll(async () => {
    await cut.$disconnect();
    await proxy.close();
  });

  it('fails that statement or transaction only; the pool goes on with new connections', async () => {
    const onPool = sqlOn(cut.pool);
    expect(await onPool.prepared(ITEM, [1])).toEqual([FIRST]);
    const statement = onPool.prepared('SELECT pg_sleep(5)', []).catch((error: Error) => error);
    const inTransaction = transaction(cut.pool, async (tx) => {
      await tx.prepared(ITEM, [2]);
      return tx.prepared('SELECT pg_sleep(5)', []);
    }).catch((error: Error) => error);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(proxy.cut()).toBeGreaterThanOrEqual(4);
    expect(String(await statement)).toMatch(/Connection terminated/);
    expect(String(await inTransaction)).toMatch(/Connection terminated/);
    expect(await onPool.prepared(ITEM, [2])).toEqual([SECOND]);
  });
});
