// `node dist/migrate.js`: applies dex's database migrations (DEX_DATABASE_URL), then exits.
// Run it before starting a new version's dex; it is safe to run again and from two places at once.
import { loadConfigFor } from '@pds/config';
import { applyMigrations } from '@pds/db';

async function main() {
  const applied = await applyMigrations('dex', loadConfigFor('dex-migrate').DEX_DATABASE_URL);
  console.error(applied.length > 0 ? `dex database: applied ${applied.join(', ')}` : 'dex database: up to date');
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
