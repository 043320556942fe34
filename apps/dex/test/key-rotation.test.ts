// Master-key rotation (apps/dex/src/rotate-key-main.ts): dex's signing key re-sealed under a new key.
import { randomBytes } from 'node:crypto';
import { createDexDb, DexKeyRepository, resealDexKey } from '@pds/db';
import { resealPrivateKey } from '@pds/tokens';
import { loadOrCreateDexKeys } from '../src/keys';
import { requireEnv } from '../../../test/support/gateway';
import { createDatabaseFrom } from '../../../test/support/templates';

describe('rotating the master key', () => {
  it("re-seals dex's signing key, which dex then opens with the new key", async () => {
    const database = await createDatabaseFrom(requireEnv('TEST_PG_ADMIN_URL'), requireEnv('TEST_DEX_TEMPLATE'));
    const db = createDexDb(database.url, { max: 1 });
    try {
      const [current, next] = [randomBytes(32), randomBytes(32)];
      const repo = new DexKeyRepository(db);
      const original = await loadOrCreateDexKeys(repo, current);
      expect(await resealDexKey(db, (sealed) => resealPrivateKey(sealed, current, next))).toBe(1);
      const reopened = await loadOrCreateDexKeys(repo, next);
      expect(reopened.keyId).toBe(original.keyId);
      expect(reopened.privateKey.export({ type: 'pkcs8', format: 'pem' })).toBe(
        original.privateKey.export({ type: 'pkcs8', format: 'pem' }),
      );
      await expect(loadOrCreateDexKeys(repo, current)).rejects.toThrow();
    } finally {
      await db.$disconnect();
      await database.drop();
    }
  });
});
