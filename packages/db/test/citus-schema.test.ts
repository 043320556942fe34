// The gateway's schema is ready to be distributed by "instanceId" (Citus, docs/deploy.md): checked on
// the catalog of the migrated template every test database is copied from, and the migration that made
// it so applies to a database that already holds data.
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { applyMigrations, readMigrations } from '@pds/db';
import { dropDatabase, ensureDatabase } from '../../../scripts/lib/postgres';
import { requireEnv } from '../../../test/support/gateway';
import { createDatabaseFrom } from '../../../test/support/templates';
import { catalogProblems, tenantTables } from './citus-rules';

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

// Against a Citus coordinator (TEST_PG_ADMIN_URL, docs/development.md; the setup then sets TEST_PG_CITUS) every test
// database is already distributed:
// there Citus itself refuses the shapes the catalog check names, and the template shows what the recipe made.
const onCitus = process.env.TEST_PG_CITUS === '1';
const plainOnly = onCitus ? it.skip : it;
const citusOnly = onCitus ? it : it.skip;

/** Runs `work` on a fresh copy of the gateway's template (on Citus the template itself takes no connections). */
async function withCopy<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const copy = await createDatabaseFrom(requireEnv('TEST_PG_ADMIN_URL'), requireEnv('TEST_GATEWAY_TEMPLATE'));
  try {
    return await withClient(copy.url, work);
  } finally {
    await copy.drop();
  }
}

const NOTE = `CREATE TABLE "Note" ("id" uuid PRIMARY KEY, "instanceId" uuid NOT NULL, "fileId" text NOT NULL)`;
const NOTE_FILE_FKEY = `ALTER TABLE "Note" ADD CONSTRAINT "Note_file_fkey" FOREIGN KEY ("instanceId", "fileId") REFERENCES "File" ("instanceId", "fileId") ON UPDATE CASCADE`;

describe('the catalog of the migrated gateway database', () => {
  it('has instanceId in every primary key, unique constraint, unique index and foreign key of a tenant table, and no foreign key that cascades updates', async () => {
    await withCopy(async (client) => {
      expect(await tenantTables(client)).toEqual(expect.arrayContaining(['User', 'File', 'FilePermission', 'DataRecord', 'DataDebit']));
      expect(await tenantTables(client)).not.toContain('Instance');
      expect(await catalogProblems(client)).toEqual([]);
    });
  });

  plainOnly('names each key that would keep the tables from being distributed (the check can fail)', async () => {
    await withCopy(async (client) => {
      await client.query(`CREATE UNIQUE INDEX "File_name_key" ON "File" ("name")`);
      await client.query(NOTE);
      await client.query(NOTE_FILE_FKEY);
      expect(await catalogProblems(client)).toEqual([
        'foreign key Note_file_fkey of Note (instanceId, fileId) is ON UPDATE CASCADE',
        'primary key Note_pkey of Note (id) lacks instanceId',
        'unique index File_name_key of File (name) lacks instanceId',
      ]);
    });
  });

  citusOnly('on a Citus coordinator: Citus refuses each of those keys, as the check says', async () => {
    await withCopy(async (client) => {
      await expect(client.query(`CREATE UNIQUE INDEX "File_name_key" ON "File" ("name")`)).rejects.toThrow(
        'creating unique indexes on non-partition columns is currently unsupported',
      );
      await client.query(NOTE);
      await expect(client.query(`SELECT create_distributed_table('"Note"', 'instanceId', colocate_with => '"User"')`)).rejects.toThrow(
        'cannot create constraint on "Note"',
      );
      await client.query(`ALTER TABLE "Note" DROP CONSTRAINT "Note_pkey", ADD PRIMARY KEY ("instanceId", "id")`);
      await client.query(`SELECT create_distributed_table('"Note"', 'instanceId', colocate_with => '"User"')`);
      await expect(client.query(NOTE_FILE_FKEY)).rejects.toThrow('cannot create foreign key constraint');
    });
  });
});

/** The foreign keys of the public schema, as pg_dump would write them. */
async function foreignKeys(client: pg.Client): Promise<{ table: string; name: string; definition: string }[]> {
  const { rows } =
    await client.query(`SELECT conrelid::regclass::text AS "table", conname AS "name", pg_get_constraintdef(oid) AS "definition"
    FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace ORDER BY 1, 2`);
  return rows;
}

/** What distribute.sql should make of each table: tenant tables by instanceId colocated with User, the others reference tables. */
async function expectedCalls(client: pg.Client): Promise<{ table: string; column: string | null; colocateWith: string | null }[]> {
  return [
    { table: '"Instance"', column: null, colocateWith: null },
    ...(await tenantTables(client)).map((t) => ({
      table: `"${t}"`,
      column: 'instanceId',
      colocateWith: t === 'User' ? 'default' : '"User"',
    })),
    ...['RetiredAddress', 'Operator', 'ConsoleSession', 'AuditEntry'].map((t) => ({
      table: `"${t}"`,
      column: null,
      colocateWith: null,
    })),
  ];
}

describe('the Citus recipe (prisma/citus/distribute.sql)', () => {
  plainOnly(
    'distributes every tenant table by instanceId colocated with User, Instance as the reference table, and leaves the foreign keys as they were',
    async () => {
      await withCopy(async (client) => {
        // Stand-ins for Citus's two functions (Citus is in neither registry): they record their calls.
        await client.query(`CREATE SCHEMA citus_stub;
        CREATE TABLE citus_stub.calls ("table" text, "column" text, "colocateWith" text);
        CREATE FUNCTION citus_stub.create_reference_table(t regclass) RETURNS void
          LANGUAGE sql AS $$ INSERT INTO citus_stub.calls VALUES (t::text, NULL, NULL) $$;
        CREATE FUNCTION citus_stub.create_distributed_table(t regclass, distribution_column text, colocate_with text DEFAULT 'default') RETURNS void
          LANGUAGE plpgsql AS $$ BEGIN
            -- As Citus refuses a table that a local table references; the recipe drops the keys first.
            IF EXISTS (SELECT 1 FROM pg_constraint WHERE contype = 'f' AND t IN (conrelid, confrelid)) THEN
              RAISE EXCEPTION '% still has foreign keys', t;
            END IF;
            INSERT INTO citus_stub.calls VALUES (t::text, distribution_column, colocate_with);
          END $$;
        SET search_path = public, citus_stub`);
        await seedInstance(client, 'a');
        const before = await foreignKeys(client);
        const rows = await rowCounts(client);

        await client.query(readFileSync(path.resolve(__dirname, '../../../prisma/citus/distribute.sql'), 'utf8'));

        const calls = (await client.query('SELECT * FROM citus_stub.calls')).rows;
        const expected = await expectedCalls(client);
        expect(calls).toHaveLength(expected.length);
        expect(calls).toEqual(expect.arrayContaining(expected));
        // The reference table first, then the table the others are colocated with.
        expect(calls.slice(0, 2).map((c) => c.table)).toEqual(['"Instance"', '"User"']);
        expect(await foreignKeys(client)).toEqual(before);
        expect(await rowCounts(client)).toEqual(rows);
      });
    },
  );

  citusOnly('on a Citus coordinator: made the test database as the recipe says, with the foreign keys of the migrated schema', async () => {
    const migrated = await ensureDatabase(requireEnv('TEST_PG_ADMIN_URL'), `pds_citus_plain_${randomUUID().slice(0, 8)}`);
    try {
      await applyMigrations('gateway', migrated);
      const before = await withClient(migrated, foreignKeys);
      await withCopy(async (client) => {
        const { rows } = await client.query<{ table: string; column: string | null; colocatedWithUser: boolean }>(
          `SELECT p.logicalrelid::regclass::text AS "table", column_to_column_name(p.logicalrelid, p.partkey) AS "column",
             p.colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = '"User"'::regclass) AS "colocatedWithUser"
           FROM pg_dist_partition p`,
        );
        const expected = (await expectedCalls(client)).map(({ table, column }) => ({ table, column, colocatedWithUser: column !== null }));
        expect(rows.map((r) => ({ ...r, column: r.column || null }))).toEqual(expect.arrayContaining(expected));
        expect(rows).toHaveLength(expected.length);
        expect(await foreignKeys(client)).toEqual(before);
        // The rows of one instance land on one worker, and a foreign key still holds there.
        const a = await seedInstance(client, 'a');
        const b = await seedInstance(client, 'b');
        const { rows: placed } = await client.query<{ nodes: number }>(
          `SELECT count(DISTINCT nodeport)::int AS nodes FROM pg_dist_shard_placement WHERE shardid IN
             (SELECT get_shard_id_for_distribution_column(t, $1::uuid) FROM unnest(ARRAY['"User"', '"File"', '"DataRecord"']::regclass[]) t)`,
          [a.instanceId],
        );
        expect(placed[0]?.nodes).toBe(1);
        await expect(
          client.query(
            `INSERT INTO "FilePermission" ("instanceId", "fileId", "userId", "contentReadable") VALUES ($1, 'f.txt', $2, true)`,
            [a.instanceId, b.userId],
          ),
        ).rejects.toMatchObject({ code: '23503' });
      });
    } finally {
      await dropDatabase(requireEnv('TEST_PG_ADMIN_URL'), new URL(migrated).pathname.slice(1));
    }
  });
});

describe('the migration that makes the schema ready', () => {
  const adminUrl = () => requireEnv('TEST_PG_ADMIN_URL');
  const name = `pds_citus_${randomUUID().slice(0, 8)}`;
  const folder = mkdtempSync(path.join(os.tmpdir(), 'pds-migrations-'));
  afterAll(async () => {
    delete process.env.MIGRATIONS_DIR;
    rmSync(folder, { recursive: true, force: true });
    await dropDatabase(adminUrl(), name);
  });

  it('applies to a database migrated to the one before it and holding rows in every table: the rows stay, the keys change', async () => {
    const all = readMigrations('gateway');
    const target = all.findIndex((m) => m.name.endsWith('_citus_ready'));
    expect(target).toBeGreaterThan(0);
    for (const m of all.slice(0, target)) {
      mkdirSync(path.join(folder, 'gateway', m.name), { recursive: true });
      writeFileSync(path.join(folder, 'gateway', m.name, 'migration.sql'), m.sql);
    }
    const url = await ensureDatabase(adminUrl(), name);
    process.env.MIGRATIONS_DIR = folder;
    await applyMigrations('gateway', url);
    delete process.env.MIGRATIONS_DIR;

    await withClient(url, async (client) => {
      const [a, b] = [await seedInstance(client, 'a'), await seedInstance(client, 'b')];
      const before = await rowCounts(client);
      expect(Object.values(before).every((n) => n > 0)).toBe(true);
      const problems = await catalogProblems(client);
      expect(problems).toContain('primary key User_pkey of User (id) lacks instanceId');
      expect(problems.filter((p) => p.endsWith('is ON UPDATE CASCADE'))).toHaveLength(14);

      expect((await applyMigrations('gateway', url))[0]).toBe(all[target]?.name);

      // The later migrations applied with it may add tables, empty ones: the rows of those before stay.
      const after = await rowCounts(client);
      expect(Object.fromEntries(Object.keys(before).map((table) => [table, after[table]]))).toEqual(before);
      expect(await catalogProblems(client)).toEqual([]);
      const key = await client.query<{ columns: string[] }>(
        `SELECT ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY AS k(n, i) JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.i)::text[] AS "columns"
         FROM pg_constraint con WHERE con.conname = 'User_pkey'`,
      );
      expect(key.rows[0]?.columns).toEqual(['instanceId', 'id']);
      // The foreign keys still hold: a permission cannot name another instance's user.
      await expect(
        client.query(`INSERT INTO "FilePermission" ("instanceId", "fileId", "userId", "contentReadable") VALUES ($1, 'f.txt', $2, true)`, [
          a.instanceId,
          b.userId,
        ]),
      ).rejects.toMatchObject({ code: '23503' });
    });
  });
});

/** An instance with a row in every tenant table. */
async function seedInstance(client: pg.Client, name: string): Promise<{ instanceId: string; userId: string }> {
  const instanceId = randomUUID();
  const userId = randomUUID();
  const recordIds = [randomUUID(), randomUUID()];
  const q = (text: string, values: unknown[]) => client.query(text, values);
  await q(`INSERT INTO "Instance" ("id", "address", "publicKeyPem", "privateKeyEnc", "keyId") VALUES ($1, $2, 'pem', 'sealed', 'k1')`, [
    instanceId,
    `${name}.pds.test`,
  ]);
  await q(`INSERT INTO "User" ("id", "instanceId", "username", "kind") VALUES ($1, $2, 'owner', 'owner')`, [userId, instanceId]);
  await q(
    `INSERT INTO "File" ("instanceId", "fileId", "name", "source", "uploaderId", "dateCreated", "lastUpdated") VALUES ($1, 'f.txt', 'f.txt', 's', $2, now(), now())`,
    [instanceId, userId],
  );
  await q(`INSERT INTO "FilePermission" ("instanceId", "fileId", "userId", "contentReadable") VALUES ($1, 'f.txt', $2, true)`, [
    instanceId,
    userId,
  ]);
  await q(`INSERT INTO "FileIdCounter" ("instanceId", "base", "ext", "last") VALUES ($1, 'f', '.txt', 0)`, [instanceId]);
  await q(`INSERT INTO "Application" ("instanceId", "appId", "record", "receivedAt", "userId") VALUES ($1, 'notes', '{}', now(), $2)`, [
    instanceId,
    userId,
  ]);
  await q(`INSERT INTO "DataGrant" ("instanceId", "userId", "namespace", "access") VALUES ($1, $2, 'notes', 'read')`, [instanceId, userId]);
  // The schema before DataRecord.bytes (the recipe's older database) or after it.
  const { rowCount: counted } = await q(
    `SELECT 1 FROM information_schema.columns WHERE table_name = 'DataRecord' AND column_name = 'bytes'`,
    [],
  );
  for (const recordId of recordIds) {
    await q(
      counted
        ? `INSERT INTO "DataRecord" ("instanceId", "recordId", "namespace", "endpoint", "data", "bytes") VALUES ($1, $2, 'notes', 'items', '{}', 2)`
        : `INSERT INTO "DataRecord" ("instanceId", "recordId", "namespace", "endpoint", "data") VALUES ($1, $2, 'notes', 'items', '{}')`,
      [instanceId, recordId],
    );
  }
  await q(`INSERT INTO "DataRecordLink" ("instanceId", "recordId", "linkedId") VALUES ($1, $2, $3)`, [instanceId, ...recordIds]);
  await q(`INSERT INTO "DataBundle" ("instanceId", "name", "query") VALUES ($1, 'b', '{}')`, [instanceId]);
  await q(
    `INSERT INTO "DataDebit" ("instanceId", "key", "requestClientName", "requestClientUrl", "requestClientLogoUrl") VALUES ($1, 'd', 'c', 'u', 'l')`,
    [instanceId],
  );
  await q(
    `INSERT INTO "DataDebitPermission" ("instanceId", "debitKey", "purpose", "start", "period", "cancelAtPeriodEnd", "termsUrl", "bundleName")
     VALUES ($1, 'd', 'p', now(), 60, false, 't', 'b')`,
    [instanceId],
  );
  return { instanceId, userId };
}

async function rowCounts(client: pg.Client): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of [...(await tenantTables(client)), 'Instance']) {
    const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${pg.escapeIdentifier(table)}`);
    counts[table] = rows[0]?.n ?? 0;
  }
  return counts;
}
