// Dex's own signing key (one row). The private half arrives and leaves sealed; this module never sees it in clear.
import type { DexDb } from '../clients';
import type { DexKey } from '../generated/dex/client';
import { sqlOn, type Sql } from '../sql';

const SIGNING = 'signing';
const GET = `SELECT "id", "keyId", "publicKeyPem", "privateKeyEnc", "createdAt" FROM "DexKey" WHERE "id" = $1`;

export class DexKeyRepository {
  private readonly sql: Sql;

  constructor(db: DexDb) {
    this.sql = sqlOn(db.pool);
  }

  async get(): Promise<DexKey | null> {
    const [row] = await this.sql.prepared<DexKey>(GET, [SIGNING]);
    return row ?? null;
  }

  /** Stores the key unless one exists, and returns whichever is stored: two dex processes starting together agree. */
  async createIfAbsent(key: Omit<DexKey, 'id' | 'createdAt'>): Promise<DexKey> {
    await this.sql.count(
      `INSERT INTO "DexKey" ("id", "keyId", "publicKeyPem", "privateKeyEnc", "createdAt") VALUES ($1, $2, $3, $4, $5::timestamptz)
      ON CONFLICT ("id") DO NOTHING`,
      [SIGNING, key.keyId, key.publicKeyPem, key.privateKeyEnc, new Date()],
    );
    const stored = await this.get();
    if (!stored) throw new Error('dex signing key vanished while being stored');
    return stored;
  }
}
