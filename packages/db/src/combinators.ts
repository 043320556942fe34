// Combinators: the original's saved single-property queries (endpoint queries with filters), stored by
// name and run with the caller's order and page (DataBundleRepository.evaluate).
import type { GatewayDb } from './clients';
import { sqlOn, type Sql } from './sql';

export interface StoredCombinator {
  name: string;
  /** The endpoint queries as the owner sent them (validated). */
  query: unknown;
  createdAt: Date;
}

const COLUMNS = `"name", "query", "createdAt"`;

export class DataCombinatorRepository {
  private readonly sql: Sql;

  constructor(db: GatewayDb) {
    this.sql = sqlOn(db.pool);
  }

  async find(instanceId: string, name: string): Promise<StoredCombinator | null> {
    const [row] = await this.sql.prepared<StoredCombinator>(
      `SELECT ${COLUMNS} FROM "DataCombinator" WHERE "instanceId" = $1::uuid AND "name" = $2`,
      [instanceId, name],
    );
    return row ?? null;
  }

  /** Creates or replaces the combinator (a replaced one keeps its createdAt). */
  async save(instanceId: string, name: string, query: unknown, now: Date): Promise<void> {
    await this.sql.count(
      `INSERT INTO "DataCombinator" ("instanceId", "name", "query", "createdAt") VALUES ($1::uuid, $2, $3::jsonb, $4::timestamptz)
       ON CONFLICT ("instanceId", "name") DO UPDATE SET "query" = EXCLUDED."query"`,
      [instanceId, name, JSON.stringify(query), now],
    );
  }
}
