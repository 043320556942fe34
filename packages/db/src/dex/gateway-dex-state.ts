// The gateway side of dex registration, as the worker sees it: which instances still wait, and the outcome.
import type { GatewayDb } from '../clients';
import type { DexState } from '../generated/gateway/client';
import { sqlOn, type Sql } from '../sql';

export class GatewayDexStateRepository {
  private readonly sql: Sql;

  constructor(db: GatewayDb) {
    this.sql = sqlOn(db.pool);
  }

  async pendingAddresses(take = 1000): Promise<string[]> {
    const rows = await this.sql.prepared<{ address: string }>(
      `SELECT "address" FROM "Instance" WHERE "dexState" = 'pending' ORDER BY "createdAt" LIMIT $1`,
      [take],
    );
    return rows.map((r) => r.address);
  }

  /** False when the gateway has no such instance. */
  async set(address: string, dexState: DexState): Promise<boolean> {
    return (await this.sql.count(`UPDATE "Instance" SET "dexState" = $2 WHERE "address" = $1`, [address, dexState])) > 0;
  }
}
