// `node apps/dex/dist/rotate-key.js`: re-seals dex's signing key from MASTER_KEY (the current key)
// to NEW_MASTER_KEY in dex's database. Run with the cluster stopped, beside the gateway's
// rotate-key.js (docs/deploy.md, "Rotating the master key").
import { loadConfigFor } from '@pds/config';
import { createDexDb, resealDexKey } from '@pds/db';
import { resealPrivateKey } from '@pds/tokens';

async function main(): Promise<void> {
  // MASTER_KEY is the current key; NEW_MASTER_KEY the one to re-seal under (both 32 bytes, hex or base64).
  const config = loadConfigFor('dex-rotate-key');
  const [current, next] = [config.MASTER_KEY, config.NEW_MASTER_KEY];
  const db = createDexDb(config.DEX_DATABASE_URL, { max: 1 });
  try {
    const changed = await resealDexKey(db, (sealed) => resealPrivateKey(sealed, current, next));
    process.stdout.write(`re-sealed ${changed} dex key(s) under NEW_MASTER_KEY\n`);
  } finally {
    await db.$disconnect();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
