import type { GatewayDb } from './clients';
import type { DataAccess, DataGrant } from './generated/gateway/client';
import { preparedRows, type Rows } from './sql';

export interface StoredRecord {
  recordId: string;
  data: unknown;
}

export interface RecordQuery {
  /** Segments of a path into `data` (validated: no "." inside a segment); absent: insertion order. */
  orderBy?: string[];
  descending: boolean;
  skip: number;
  take: number;
}

export interface TableRow {
  namespace: string;
  endpoint: string;
  data: unknown;
}

export interface LocatedRecord extends StoredRecord {
  namespace: string;
  endpoint: string;
}

type Sql = Pick<GatewayDb, '$queryRaw'>;

/**
 * Inserts rows in one statement (all or nothing), in array order: `seq` follows the ordinality.
 * Takes a client or a transaction, so a batch can add its links in the same transaction.
 */
export async function insertRows(db: Sql, instanceId: string, userId: string, rows: TableRow[]): Promise<LocatedRecord[]> {
  return db.$queryRaw<LocatedRecord[]>`
    WITH inserted AS (
      INSERT INTO "DataRecord" ("instanceId", "recordId", "namespace", "endpoint", "data", "userId")
      SELECT ${instanceId}::uuid, gen_random_uuid(), t.r->>'namespace', t.r->>'endpoint', t.r->'data', ${userId}::uuid
      FROM jsonb_array_elements(${JSON.stringify(rows)}::jsonb) WITH ORDINALITY AS t(r, n)
      ORDER BY t.n
      RETURNING "recordId"::text AS "recordId", "namespace", "endpoint", "data", "seq"
    )
    SELECT "recordId", "namespace", "endpoint", "data" FROM inserted ORDER BY "seq"`;
}

/** Records of the data tables. Every method takes the instance id first. */
export class DataRecordRepository {
  private readonly rows: Rows;

  constructor(private readonly db: GatewayDb) {
    this.rows = preparedRows(db.pool);
  }

  /**
   * Inserts the records in one statement, so an array is stored all or nothing, in array order.
   * `userId` is the account that writes them: by id, only it (or the owner) may change them later.
   */
  async insert(instanceId: string, userId: string, namespace: string, endpoint: string, records: unknown[]): Promise<StoredRecord[]> {
    const rows = await insertRows(
      this.db,
      instanceId,
      userId,
      records.map((data) => ({ namespace, endpoint, data })),
    );
    return rows.map(({ recordId, data }) => ({ recordId, data }));
  }

  /**
   * A read of every data call: one of four fixed texts (path or insertion order, either direction), each
   * a prepared statement (packages/db/src/sql.ts), with the path as a bound text[].
   */
  find(instanceId: string, namespace: string, endpoint: string, query: RecordQuery): Promise<StoredRecord[]> {
    const direction = query.descending ? 'DESC' : 'ASC';
    // Records without the path sort last either way, as the original system's clients expect.
    const order = query.orderBy ? `"data" #> $6::text[] ${direction} NULLS LAST, "seq" ASC` : `"seq" ${direction}`;
    const values: unknown[] = [instanceId, namespace, endpoint, query.skip, query.take];
    if (query.orderBy) values.push(query.orderBy);
    return this.rows<StoredRecord>(
      `SELECT "recordId"::text AS "recordId", "data" FROM "DataRecord"
       WHERE "instanceId" = $1::uuid AND "namespace" = $2 AND "endpoint" = $3
       ORDER BY ${order} OFFSET $4 LIMIT $5`,
      values,
    );
  }

  /** The number of records removed. */
  async deleteEndpoint(instanceId: string, namespace: string, endpoint: string): Promise<number> {
    const { count } = await this.db.dataRecord.deleteMany({ where: { instanceId, namespace, endpoint } });
    return count;
  }
}

export interface GrantKey {
  userId: string;
  namespace: string;
  /** "*" for every endpoint of the namespace. */
  endpoint: string;
  access: DataAccess;
}

/** Who may read or write which data namespaces (apps' sets are written by ApplicationRepository.setUp). */
export class DataGrantRepository {
  private readonly rows: Rows;

  constructor(private readonly db: GatewayDb) {
    this.rows = preparedRows(db.pool);
  }

  /** Read for every data call of an app or user: a prepared statement (packages/db/src/sql.ts). */
  listFor(instanceId: string, userId: string): Promise<DataGrant[]> {
    return this.rows<DataGrant>(
      `SELECT "instanceId", "userId", "namespace", "endpoint", "access" FROM "DataGrant"
       WHERE "instanceId" = $1::uuid AND "userId" = $2::uuid ORDER BY "namespace", "endpoint", "access"`,
      [instanceId, userId],
    );
  }

  /** Granting twice is harmless. */
  async grant(instanceId: string, grant: GrantKey): Promise<void> {
    await this.db.dataGrant.createMany({ data: [{ instanceId, ...grant }], skipDuplicates: true });
  }

  /** True when the grant existed. */
  async revoke(instanceId: string, grant: GrantKey): Promise<boolean> {
    const { count } = await this.db.dataGrant.deleteMany({ where: { instanceId, ...grant } });
    return count > 0;
  }
}
