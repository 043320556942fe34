// Template databases: migrated once per set of migration files, then copied for each test file
// (CREATE DATABASE … TEMPLATE takes ~100 ms, far less than migrating).
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { withDatabase } from '../../scripts/lib/postgres';
import { migrate, type Target } from '../../scripts/lib/prisma';

const root = path.resolve(__dirname, '../..');
const LOCK_ID = 7_402_118; // advisory lock shared by every test process that creates databases

function migrationsHash(target: Target): string {
  const dir = path.join(root, 'prisma', target, 'migrations');
  const hash = createHash('sha256');
  for (const name of readdirSync(dir).sort()) {
    const file = path.join(dir, name, 'migration.sql');
    hash.update(name);
    try {
      hash.update(readFileSync(file));
    } catch {
      // migration_lock.toml and other non-folders
    }
  }
  return hash.digest('hex').slice(0, 12);
}

async function withLock<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [LOCK_ID]);
    return await work(client);
  } finally {
    await client.query('select pg_advisory_unlock($1)', [LOCK_ID]).catch(() => undefined);
    await client.end();
  }
}

/** The name of a migrated template database for this target, created if missing. */
export async function ensureTemplate(adminUrl: string, target: Target): Promise<string> {
  const name = `pds_tpl_${target}_${migrationsHash(target)}`;
  return withLock(adminUrl, async (client) => {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (rowCount) return name;
    const building = `${name}_building`;
    await client.query(`drop database if exists ${pg.escapeIdentifier(building)} with (force)`);
    await client.query(`create database ${pg.escapeIdentifier(building)}`);
    await migrate(target, withDatabase(adminUrl, building));
    await client.query(`alter database ${pg.escapeIdentifier(building)} rename to ${pg.escapeIdentifier(name)}`);
    return name;
  });
}

/** A fresh database copied from the template; `drop` removes it. */
export async function createDatabaseFrom(adminUrl: string, template: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `pds_test_${randomBytes(6).toString('hex')}`;
  await withLock(adminUrl, (client) =>
    client.query(`create database ${pg.escapeIdentifier(name)} template ${pg.escapeIdentifier(template)}`),
  );
  return {
    url: withDatabase(adminUrl, name),
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}
