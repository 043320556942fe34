// Dex's own signing key (one row). The private half arrives and leaves sealed; this module never sees it in clear.
import type { DexDb } from '../clients';
import type { DexKey } from '../generated/dex/client';

const SIGNING = 'signing';

export class DexKeyRepository {
  constructor(private readonly db: DexDb) {}

  get(): Promise<DexKey | null> {
    return this.db.dexKey.findUnique({ where: { id: SIGNING } });
  }

  /** Stores the key unless one exists, and returns whichever is stored: two dex processes starting together agree. */
  async createIfAbsent(key: Omit<DexKey, 'id' | 'createdAt'>): Promise<DexKey> {
    await this.db.dexKey.createMany({ data: [{ id: SIGNING, ...key }], skipDuplicates: true });
    return this.db.dexKey.findUniqueOrThrow({ where: { id: SIGNING } });
  }
}
