// Applies the Prisma migrations in prisma/<target>/migrations with plain `pg`, so production needs
// neither the Prisma CLI nor tsx. It keeps Prisma's own bookkeeping table (_prisma_migrations, same
// checksum), so `prisma migrate` still agrees with a database migrated here and the other way round.
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';

export type MigrationTarget = 'gateway' | 'dex';

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

/** Serialises migrators of one database (two replicas starting at once must not both migrate). */
const LOCK_ID = 7_402_119;

const BOOKKEEPING = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

/**
 * The migrations folder of a target: MIGRATIONS_DIR/<target> when set, else the first
 * prisma/<target>/migrations above this file (the repository in development and in a built image alike).
 */
export function migrationsDir(target: MigrationTarget): string {
  if (process.env.MIGRATIONS_DIR) return path.join(process.env.MIGRATIONS_DIR, target);
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'prisma', target, 'migrations');
    if (existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`no prisma/${target}/migrations folder above ${__dirname}; set MIGRATIONS_DIR`);
  }
}

/** The target's migrations in the order they apply. */
export function readMigrations(target: MigrationTarget): Migration[] {
  const dir = migrationsDir(target);
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

/** Applies every migration not yet applied, each in its own transaction. Returns the names applied. */
export async function applyMigrations(target: MigrationTarget, url: string): Promise<string[]> {
  const migrations = readMigrations(target);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_ID]);
    await client.query(BOOKKEEPING);
    const { rows } = await client.query<{ migration_name: string; finished_at: Date | null }>(
      'SELECT migration_name, finished_at FROM _prisma_migrations WHERE rolled_back_at IS NULL',
    );
    const failed = rows.find((row) => row.finished_at === null);
    if (failed) throw new Error(`migration ${failed.migration_name} failed earlier and needs a look (see _prisma_migrations.logs)`);
    const done = new Set(rows.map((row) => row.migration_name));
    const applied: string[] = [];
    for (const migration of migrations.filter((m) => !done.has(m.name))) {
      try {
        await client.query('BEGIN');
        // A file of several statements runs as one simple query (no parameters), as psql would run it.
        await client.query(migration.sql);
        await client.query(
          'INSERT INTO _prisma_migrations (id, checksum, migration_name, finished_at, applied_steps_count) VALUES ($1, $2, $3, now(), 1)',
          [randomUUID(), migration.checksum, migration.name],
        );
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new Error(`migration ${migration.name} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
      applied.push(migration.name);
    }
    return applied;
  } finally {
    await client.end();
  }
}

const knownNames = new Map<MigrationTarget, string[]>();

/** Names of the target's migrations that the database has not applied (readiness; the folder is read once). */
export async function pendingMigrations(
  target: MigrationTarget,
  query: (sql: string) => Promise<{ migration_name: string }[]>,
): Promise<string[]> {
  const rows = await query('SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL');
  const done = new Set(rows.map((row) => row.migration_name));
  let names = knownNames.get(target);
  if (!names) knownNames.set(target, (names = readMigrations(target).map((m) => m.name)));
  return names.filter((name) => !done.has(name));
}
