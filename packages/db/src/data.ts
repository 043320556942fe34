import { randomUUID } from 'node:crypto';
import type { GatewayDb } from './clients';
import type { DataAccess, DataGrant } from './generated/gateway/client';
import type { AccountsChanged } from './users';
import { eventStatements, type Actor, type NewEvent } from './outbox';
import { ReadRouting } from './replica';
import {
  isUuid,
  pageClause,
  sqlOn,
  statement,
  textPerRows,
  transaction,
  type Sql,
  type Statement,
  type TransactionStatements,
} from './sql';
import { allowanceShort, QuotaExceeded, recordUsage, refillRecordAllowance, UNLIMITED, type QuotaDefaults } from './usage';

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

/** A table by its names. */
export interface TableName {
  namespace: string;
  endpoint: string;
}

export interface LocatedRecord extends StoredRecord {
  namespace: string;
  endpoint: string;
}

/**
 * A record's data with its JSON text, made once where the data comes in (the gateway checks its size
 * on it), and that text's UTF-8 bytes: what the record counts in the usage.
 */
export interface RecordJson {
  data: unknown;
  json: string;
  bytes: number;
}

export function recordJson(data: unknown): RecordJson {
  const json = JSON.stringify(data) ?? 'null';
  return { data, json, bytes: Buffer.byteLength(json) };
}

/** A record to store in a table, with the id the gateway gives it. */
export interface NewRecord extends LocatedRecord, RecordJson {}

export function newRecord(table: TableName, { data, json, bytes }: RecordJson): NewRecord {
  // Named, not spread: a property after a spread is V8's slow path, and this runs per record (serve.ts).
  return { recordId: randomUUID(), namespace: table.namespace, endpoint: table.endpoint, data, json, bytes };
}

/** Rows of one INSERT: a few statement texts cover every batch, and none binds too many values. */
const ROWS_PER_INSERT = 100;

/** $1 instance, $2 writer, $3 createdAt, then each record's id, namespace, endpoint, JSON and bytes. */
const insertRecords = textPerRows(
  (count) =>
    `INSERT INTO "DataRecord" ("instanceId", "recordId", "namespace", "endpoint", "data", "bytes", "userId", "createdAt") VALUES ${Array.from(
      { length: count },
      (_, i) =>
        `($1::uuid, $${4 + 5 * i}::uuid, $${5 + 5 * i}, $${6 + 5 * i}, $${7 + 5 * i}::jsonb, $${8 + 5 * i}::int, $2::uuid, $3::timestamptz)`,
    ).join(', ')}`,
);

/**
 * The same for rows of one table (an array posted to it, a batch to one table): its namespace and
 * endpoint bound once as $4 and $5, then each record's id, JSON and bytes. Two fifths fewer values
 * to bind and send than the rows of several tables need.
 */
const insertTableRecords = textPerRows(
  (count) =>
    `INSERT INTO "DataRecord" ("instanceId", "recordId", "namespace", "endpoint", "data", "bytes", "userId", "createdAt") VALUES ${Array.from(
      { length: count },
      (_, i) => `($1::uuid, $${6 + 3 * i}::uuid, $4, $5, $${7 + 3 * i}::jsonb, $${8 + 3 * i}::int, $2::uuid, $3::timestamptz)`,
    ).join(', ')}`,
);

/** One INSERT of these rows, in their order. */
function insertRows(instanceId: string, userId: string, now: Date, rows: NewRecord[]): Statement {
  const { namespace, endpoint } = rows[0]!;
  if (rows.every((r) => r.namespace === namespace && r.endpoint === endpoint)) {
    const values: unknown[] = [instanceId, userId, now, namespace, endpoint];
    for (const r of rows) values.push(r.recordId, r.json, r.bytes);
    return statement(insertTableRecords(rows.length), values);
  }
  const values: unknown[] = [instanceId, userId, now];
  for (const r of rows) values.push(r.recordId, r.namespace, r.endpoint, r.json, r.bytes);
  return statement(insertRecords(rows.length), values);
}

/** The record events of these records. */
export const recordEvents = (type: string, records: Omit<LocatedRecord, 'data'>[]): NewEvent[] =>
  records.map(({ namespace, endpoint, recordId }) => ({ type, object: { namespace, endpoint, recordId } }));

/**
 * The statements that store records, in array order (`seq` follows it): their count in the usage first,
 * then the rows and their events; plain statements of one batch.
 */
export function insertStatements(
  instanceId: string,
  userId: string,
  records: NewRecord[],
  quotas: QuotaDefaults,
  actor: Actor,
): Statement[] {
  const now = new Date();
  const statements = recordUsage(instanceId, records.length, sumBytes(records), quotas.recordsBytes);
  for (let start = 0; start < records.length; start += ROWS_PER_INSERT) {
    statements.push(insertRows(instanceId, userId, now, records.slice(start, start + ROWS_PER_INSERT)));
  }
  return [...statements, ...eventStatements(instanceId, recordEvents('record.created', records), actor, now)];
}

export const sumBytes = (records: { bytes: number }[]) => records.reduce((total, r) => total + r.bytes, 0);

/**
 * Runs a change of records in one transaction. `change` calls `refill(bytes)` before the statements that
 * count them: nothing the first time. When the writer's allowance could not cover them (the CHECK of
 * usage.ts failed, and the transaction was undone), the change runs again in a new transaction whose
 * `refill` grants the allowance first, or throws QuotaExceeded (nothing stored) when the quota is used up.
 */
export async function changeRecords<T>(
  pool: GatewayDb['pool'],
  instanceId: string,
  quotas: QuotaDefaults,
  change: (tx: TransactionStatements, refill: (bytes: number) => Promise<void>) => Promise<T>,
): Promise<T> {
  try {
    return await transaction(pool, (tx) => change(tx, () => Promise.resolve()));
  } catch (error) {
    if (!allowanceShort(error)) throw error;
  }
  return transaction(pool, (tx) =>
    change(tx, async (bytes) => {
      if (!(await refillRecordAllowance(tx, instanceId, bytes, quotas.recordsBytes))) throw new QuotaExceeded('records');
    }),
  );
}

/**
 * Removes the records a DELETE (`text`, RETURNING "recordId", "namespace", "endpoint", "bytes") finds,
 * and ends the transaction with their usage and events; the number removed.
 */
export async function removeRecords(
  tx: TransactionStatements,
  text: string,
  values: [instanceId: string, ...rest: unknown[]],
  quotas: QuotaDefaults,
  actor: Actor,
): Promise<number> {
  const [instanceId] = values;
  const gone = await tx.prepared<Omit<LocatedRecord, 'data'> & { bytes: number }>(text, values);
  if (gone.length > 0) {
    await tx.finish([
      ...recordUsage(instanceId, -gone.length, -sumBytes(gone), quotas.recordsBytes),
      ...eventStatements(instanceId, recordEvents('record.deleted', gone), actor),
    ]);
  }
  return gone.length;
}

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
    records: RecordJson[],
    actor: Actor,
  ): Promise<NewRecord[]> {
    const table = { namespace, endpoint };
    const rows = records.map((record) => newRecord(table, record));
    const statements = insertStatements(instanceId, userId, rows, this.quotas, actor);
    await this.reads.written(
      instanceId,
      changeRecords(this.db.pool, instanceId, this.quotas, async (tx, refill) => {
        await refill(sumBytes(rows));
        await tx.finish(statements);
      }),
    );
    return rows;
  }

  /**
   * A read of every data call: one of a few fixed texts (path or insertion order, either direction, the
   * first page or a later one), each a prepared statement (packages/db/src/sql.ts), with the path as a
   * bound text[].
   */
  find(instanceId: string, namespace: string, endpoint: string, query: RecordQuery): Promise<StoredRecord[]> {
    return this.select('"data"', instanceId, namespace, endpoint, query);
  }

  /** The records `find` reads, with their data as the JSON text the database keeps (for answers that pass it on as it is). */
  findJson(instanceId: string, namespace: string, endpoint: string, query: RecordQuery): Promise<{ recordId: string; data: string }[]> {
    return this.select('"data"::text AS "data"', instanceId, namespace, endpoint, query);
  }

  private select<R>(data: string, instanceId: string, namespace: string, endpoint: string, query: RecordQuery): Promise<R[]> {
    const direction = query.descending ? 'DESC' : 'ASC';
    // Records without the path sort last either way, as the original system's clients expect.
    const values: unknown[] = [instanceId, namespace, endpoint];
    const order = query.orderBy
      ? `"data" #> $${values.push(query.orderBy)}::text[] ${direction} NULLS LAST, "seq" ASC`
      : `"seq" ${direction}`;
    return this.sql.prepared<R>(
      `SELECT "recordId", ${data} FROM "DataRecord"
       WHERE "instanceId" = $1::uuid AND "namespace" = $2 AND "endpoint" = $3
       ORDER BY ${order} ${pageClause(values, query)}`,
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
  deleteEndpoint(instanceId: string, namespace: string, endpoint: string, actor: Actor): Promise<number> {
    const remove = transaction(this.db.pool, (tx) =>
      removeRecords(
        tx,
        `DELETE FROM "DataRecord" WHERE "instanceId" = $1::uuid AND "namespace" = $2 AND "endpoint" = $3
        RETURNING "recordId", "namespace", "endpoint", "bytes"`,
        [instanceId, namespace, endpoint],
        this.quotas,
        actor,
      ),
    );
    return this.reads.written(instanceId, remove);
  }
}

export interface GrantKey {
  userId: string;
  namespace: string;
  /** "*" for every endpoint of the namespace. */
  endpoint: string;
  access: DataAccess;
}

/**
 * Who may read or write which data namespaces (apps' sets are written by ApplicationRepository.setUp).
 * Gateways cache an account's grants with its account: a change is announced through `changed`.
 */
export class DataGrantRepository {
  private readonly sql: Sql;

  constructor(
    db: GatewayDb,
    private readonly changed: AccountsChanged = async () => undefined,
  ) {
    this.sql = sqlOn(db.pool);
  }

  /** An account's grants: read for a data call of an app or user when the gateway has not cached them. */
  grants(instanceId: string, userId: string): Promise<DataGrant[]> {
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
    await this.changed(instanceId);
  }

  /** True when the grant existed. */
  async revoke(instanceId: string, grant: GrantKey): Promise<boolean> {
    if (!isUuid(grant.userId)) return false;
    const count = await this.sql.count(
      `DELETE FROM "DataGrant"
       WHERE "instanceId" = $1::uuid AND "userId" = $2::uuid AND "namespace" = $3 AND "endpoint" = $4 AND "access" = $5`,
      [instanceId, grant.userId, grant.namespace, grant.endpoint, grant.access],
    );
    if (count > 0) await this.changed(instanceId);
    return count > 0;
  }
}
