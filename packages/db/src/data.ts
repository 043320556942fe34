import { randomUUID } from 'node:crypto';
import type { GatewayDb } from './clients';
import type { DataAccess, DataGrant } from './generated/gateway/client';
import { eventCte, eventValues, type Actor } from './outbox';
import { ReadRouting } from './replica';
import { isUuid, sqlOn, transaction, type Sql } from './sql';
import { addRecordUsage, QuotaExceeded, refillRecordAllowance, removeRecordUsage, UNLIMITED, type QuotaDefaults } from './usage';

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

/** A data record event's object, from a row of a change's RETURNING. */
export const RECORD_OBJECT = `jsonb_build_object('namespace', "namespace", 'endpoint', "endpoint", 'recordId', "recordId")`;

/** The bytes a record counts in the usage: its JSON text (`data` a jsonb expression). */
export const recordBytes = (data: string) => `octet_length((${data})::text)`;

/**
 * $1 instance, $2 writer, $3 the rows as a JSON array (ids included), $4 createdAt, $5 the cluster's
 * records quota, $6… the events' (outbox.ts). The usage is added first (usage.ts) and the rows are
 * inserted only when it was: no row at all when they would pass the quota.
 */
const INSERT_ROWS = `WITH incoming AS (
    SELECT t.r, t.n FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS t(r, n)
  ), ${addRecordUsage('(SELECT count(*) FROM incoming)', `(SELECT coalesce(sum(${recordBytes("r->'data'")}), 0) FROM incoming)`, '$5')},
  inserted AS (
    INSERT INTO "DataRecord" ("instanceId", "recordId", "namespace", "endpoint", "data", "userId", "createdAt")
    SELECT $1::uuid, (t.r->>'recordId')::uuid, t.r->>'namespace', t.r->>'endpoint', t.r->'data', $2::uuid, $4::timestamptz
    FROM incoming t WHERE EXISTS (SELECT 1 FROM usage)
    ORDER BY t.n
    RETURNING "recordId", "namespace", "endpoint", "data", "seq"
  ),
  ${eventCte('inserted', `'record.created'`, RECORD_OBJECT, 6)}
  SELECT "recordId", "namespace", "endpoint", "data" FROM inserted ORDER BY "seq"`;

/** The record bytes of rows given as INSERT_ROWS takes them ($1): what they need of the allowance. */
const ROWS_BYTES = `SELECT coalesce(sum(${recordBytes("t.r->'data'")}), 0)::text AS "bytes" FROM jsonb_array_elements($1::jsonb) AS t(r)`;

/** Runs `work` in a transaction: the one the statements belong to, or a new one. */
export type InTransaction = <T>(work: (tx: Sql) => Promise<T>) => Promise<T>;

/**
 * Inserts rows in one statement (all or nothing), in array order: `seq` follows the ordinality, and
 * counts them in the instance's usage in the same statement. Takes the pool's statements or a
 * transaction's, so a batch can add its links in the same transaction; `inTransaction` runs the refill
 * and the second try together when the writer's allowance was short (usage.ts). Ids and the time are
 * made here and bound, so the statement calls no volatile function. Throws QuotaExceeded (nothing
 * stored) when the rows would pass the instance's records quota.
 */
export async function insertRows(
  sql: Sql,
  instanceId: string,
  userId: string,
  rows: TableRow[],
  quotas: QuotaDefaults,
  actor: Actor,
  inTransaction: InTransaction = (work) => work(sql),
): Promise<LocatedRecord[]> {
  const json = JSON.stringify(rows.map((row) => ({ ...row, recordId: randomUUID() })));
  const values = [instanceId, userId, json, new Date(), quotas.recordsBytes, ...eventValues(actor)];
  const saved = await sql.prepared<LocatedRecord>(INSERT_ROWS, values);
  if (saved.length === rows.length) return saved;
  const again = await inTransaction(async (tx) => {
    const [need] = await tx.prepared<{ bytes: string }>(ROWS_BYTES, [json]);
    if (!(await refillRecordAllowance(tx, instanceId, Number(need!.bytes), quotas.recordsBytes))) return [];
    return tx.prepared<LocatedRecord>(INSERT_ROWS, values);
  });
  if (again.length < rows.length) throw new QuotaExceeded('records');
  return again;
}

/**
 * A delete of records (`del`, its first parameter the instance, RETURNING "recordId", "namespace",
 * "endpoint", "data") that takes them out of the instance's usage and writes their events in the same
 * statement, the events' parameters from `$eventsFirst` (outbox.ts); answers how many it removed.
 */
export const withoutRecords = (del: string, eventsFirst: number) => `WITH gone AS (${del}),
  ${removeRecordUsage('(SELECT count(*) FROM gone)', `(SELECT coalesce(sum(${recordBytes('"data"')}), 0) FROM gone)`)},
  ${eventCte('gone', `'record.deleted'`, RECORD_OBJECT, eventsFirst)}
  SELECT count(*)::int AS "removed" FROM gone`;

/** Records of the data tables. Every method takes the instance id first. */
export class DataRecordRepository {
  private readonly sql: Sql;

  /** `reads` learns of every write here (see ReadRouting); `quotas`: the cluster's, absent only for tools that read. */
  constructor(
    private readonly db: GatewayDb,
    private readonly reads = new ReadRouting(db),
    private readonly quotas: QuotaDefaults = UNLIMITED,
  ) {
    this.sql = sqlOn(db.pool);
  }

  /**
   * Inserts the records in one statement, so an array is stored all or nothing, in array order.
   * `userId` is the account that writes them: by id, only it (or the owner) may change them later.
   */
  async insert(
    instanceId: string,
    userId: string,
    namespace: string,
    endpoint: string,
    records: unknown[],
    actor: Actor,
  ): Promise<StoredRecord[]> {
    const rows = await this.reads.written(
      instanceId,
      insertRows(
        this.sql,
        instanceId,
        userId,
        records.map((data) => ({ namespace, endpoint, data })),
        this.quotas,
        actor,
        (work) => transaction(this.db.pool, work),
      ),
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
    return this.sql.prepared<StoredRecord>(
      `SELECT "recordId", "data" FROM "DataRecord"
       WHERE "instanceId" = $1::uuid AND "namespace" = $2 AND "endpoint" = $3
       ORDER BY ${order} OFFSET $4 LIMIT $5`,
      values,
    );
  }

  /** How many records the table holds: an index-only scan of its (instanceId, namespace, endpoint, seq) index. */
  async count(instanceId: string, namespace: string, endpoint: string): Promise<number> {
    const [row] = await this.sql.prepared<{ count: number }>(
      `SELECT count(*)::int AS "count" FROM "DataRecord" WHERE "instanceId" = $1::uuid AND "namespace" = $2 AND "endpoint" = $3`,
      [instanceId, namespace, endpoint],
    );
    return row?.count ?? 0;
  }

  /** The number of records removed. */
  async deleteEndpoint(instanceId: string, namespace: string, endpoint: string, actor: Actor): Promise<number> {
    const remove = this.sql.prepared<{ removed: number }>(
      withoutRecords(
        `DELETE FROM "DataRecord" WHERE "instanceId" = $1::uuid AND "namespace" = $2 AND "endpoint" = $3
        RETURNING "recordId", "namespace", "endpoint", "data"`,
        4,
      ),
      [instanceId, namespace, endpoint, ...eventValues(actor)],
    );
    const [row] = await this.reads.written(instanceId, remove);
    return row?.removed ?? 0;
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
  private readonly sql: Sql;

  constructor(db: GatewayDb) {
    this.sql = sqlOn(db.pool);
  }

  /** Read for every data call of an app or user: a prepared statement (packages/db/src/sql.ts). */
  listFor(instanceId: string, userId: string): Promise<DataGrant[]> {
    return this.sql.prepared<DataGrant>(
      `SELECT "instanceId", "userId", "namespace", "endpoint", "access" FROM "DataGrant"
       WHERE "instanceId" = $1::uuid AND "userId" = $2::uuid ORDER BY "namespace", "endpoint", "access"`,
      [instanceId, userId],
    );
  }

  /** Granting twice is harmless. */
  async grant(instanceId: string, grant: GrantKey): Promise<void> {
    await this.sql.count(
      `INSERT INTO "DataGrant" ("instanceId", "userId", "namespace", "endpoint", "access") VALUES ($1::uuid, $2::uuid, $3, $4, $5)
       ON CONFLICT DO NOTHING`,
      [instanceId, grant.userId, grant.namespace, grant.endpoint, grant.access],
    );
  }

  /** True when the grant existed. */
  async revoke(instanceId: string, grant: GrantKey): Promise<boolean> {
    if (!isUuid(grant.userId)) return false;
    const count = await this.sql.count(
      `DELETE FROM "DataGrant"
       WHERE "instanceId" = $1::uuid AND "userId" = $2::uuid AND "namespace" = $3 AND "endpoint" = $4 AND "access" = $5`,
      [instanceId, grant.userId, grant.namespace, grant.endpoint, grant.access],
    );
    return count > 0;
  }
}
