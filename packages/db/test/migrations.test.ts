// The production migration runner against real PostgreSQL: it applies every migration once, keeps
// Prisma's bookkeeping (so the Prisma CLI agrees), and leaves nothing behind when a migration fails.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { applyMigrations, pendingMigrations, readMigrations } from '@pds/db';
import { dropDatabase, ensureDatabase } from '../../../scripts/lib/postgres';
import { runPrisma } from '../../../scripts/lib/prisma';
import { requireEnv } from '../../../test/support/gateway';

const created: string[] = [];
async function freshDatabase(): Promise<string> {
  const name = `pds_migrate_${Math.random().toString(36).slice(2, 10)}`;
  created.push(name);
  return ensureDatabase(requireEnv('TEST_PG_ADMIN_URL'), name);
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  for (const name of created) await dropDatabase(requireEnv('TEST_PG_ADMIN_URL'), name);
});

it('applies every migration once, in order, and then has nothing pending', async () => {
  const url = await freshDatabase();
  const names = readMigrations('gateway').map((m) => m.name);
  expect(names.length).toBeGreaterThan(1);
  expect(await applyMigrations('gateway', url)).toEqual(names);
  expect(await applyMigrations('gateway', url)).toEqual([]);
  expect(await pendingMigrations('gateway', (sql) => query(url, sql))).toEqual([]);
  const tables = (
    await query<{ table_name: string }>(url, "select table_name from information_schema.tables where table_schema = 'public'")
  ).map((r) => r.table_name);
  expect(tables).toEqual(expect.arrayContaining(['Instance', 'User', 'File', '_prisma_migrations']));
});

it('keeps the bookkeeping the Prisma CLI reads: prisma migrate deploy finds nothing to do', async () => {
  const url = await freshDatabase();
  await applyMigrations('dex', url);
  const before = await query<{ n: string }>(url, 'select count(*) as n from _prisma_migrations');
  expect(runPrisma('dex', ['migrate', 'deploy'], { url, quiet: true })).toBe(0);
  expect(await query<{ n: string }>(url, 'select count(*) as n from _prisma_migrations')).toEqual(before);
});

it('rolls a failing migration back whole and names it; the next run tries it again', async () => {
  const url = await freshDatabase();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pds-migrations-'));
  const write = (name: string, sql: string) => {
    mkdirSync(path.join(dir, 'gateway', name), { recursive: true });
    writeFileSync(path.join(dir, 'gateway', name, 'migration.sql'), sql);
  };
  write('1_good', 'CREATE TABLE "A" ("id" int);');
  write('2_bad', 'CREATE TABLE "B" ("id" int);\nINSERT INTO "Nope" VALUES (1);');
  process.env.MIGRATIONS_DIR = dir;
  try {
    await expect(applyMigrations('gateway', url)).rejects.toThrow(/migration 2_bad failed: relation "Nope" does not exist/);
    const tables = (
      await query<{ table_name: string }>(url, "select table_name from information_schema.tables where table_schema = 'public'")
    ).map((r) => r.table_name);
    expect(tables.sort()).toEqual(['A', '_prisma_migrations']);
    expect(
      (await query<{ migration_name: string }>(url, 'select migration_name from _prisma_migrations')).map((r) => r.migration_name),
    ).toEqual(['1_good']);
    write('2_bad', 'CREATE TABLE "B" ("id" int);');
    expect(await applyMigrations('gateway', url)).toEqual(['2_bad']);
  } finally {
    delete process.env.MIGRATIONS_DIR;
  }
});
