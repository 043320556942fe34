// `node dist/migrate.js`: applies the gateway database's migrations (DATABASE_URL), then exits.
// Run it before starting a new version's gateways; it is safe to run again and from two places at once.
import { loadConfigFor } from '@pds/config';
import { applyMigrations } from '@pds/db';

async function main() {
  const applied = await applyMigrations('gateway', loadConfigFor('gateway-migrate').DATABASE_URL);
  console.error(applied.length > 0 ? `gateway database: applied ${applied.join(', ')}` : 'gateway database: up to date');
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
