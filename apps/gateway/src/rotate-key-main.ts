// `node apps/gateway/dist/rotate-key.js`: re-seals every instance's private key from MASTER_KEY
// (the current key) to NEW_MASTER_KEY in the gateway database. Stop the cluster first; then run dex's
// rotate-key.js, and start everything with the new key (docs/deploy.md, "Rotating the master key").
import { loadConfigFor } from '@pds/config';
import { createGatewayDb, resealInstanceKeys } from '@pds/db';
import { resealPrivateKey } from '@pds/tokens';

async function main(): Promise<void> {
  // MASTER_KEY is the current key; NEW_MASTER_KEY the one to re-seal under (both 32 bytes, hex or base64).
  const config = loadConfigFor('gateway-rotate-key');
  const [current, next] = [config.MASTER_KEY, config.NEW_MASTER_KEY];
  if (config.STORAGE === 'local') {
    throw new Error('STORAGE=local: stored files are encrypted under a key derived from MASTER_KEY, which this tool does not re-encrypt');
  }
  const db = createGatewayDb(config.DATABASE_URL, { max: 2 });
  try {
    const changed = await resealInstanceKeys(db, (sealed) => resealPrivateKey(sealed, current, next));
    process.stdout.write(`re-sealed ${changed} instance key(s) under NEW_MASTER_KEY\n`);
  } finally {
    await db.$disconnect();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
