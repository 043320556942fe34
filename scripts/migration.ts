// `pnpm migration <gateway|dex> <name>`: after editing prisma/<target>/*.prisma, writes
// prisma/<target>/migrations/<UTC timestamp>_<name>/migration.sql (the SQL from the schema as last
// committed to the edited one) and generates the client again. Uses DATABASE_URL (DEX_DATABASE_URL for
// dex) or a local PostgreSQL, else starts an embedded one for the moment: Prisma connects to diff.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeMigration } from './lib/new-migration';
import { ensurePostgres } from './lib/postgres';
import { runPrisma, URL_VARIABLE, type Target } from './lib/prisma';

async function main(): Promise<number> {
  const [target, name] = process.argv.slice(2);
  if ((target !== 'gateway' && target !== 'dex') || !name) {
    console.error('usage: pnpm migration <gateway|dex> <name>   (after editing prisma/<gateway|dex>/*.prisma)');
    return 2;
  }
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pds-migration-pg-'));
  const configuredUrl = process.env[URL_VARIABLE[target as Target]] ?? process.env.DATABASE_URL;
  const postgres = await ensurePostgres({ configuredUrl, dataDir });
  try {
    const file = writeMigration({ target, name, databaseUrl: postgres.adminUrl });
    if (!file) {
      console.log(`prisma/${target}: the schema is as committed; no migration written`);
      return 0;
    }
    console.log(`wrote ${path.relative(process.cwd(), file)}; review it, then commit it with the schema`);
    return runPrisma(target, ['generate'], { quiet: true });
  } finally {
    await postgres.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
