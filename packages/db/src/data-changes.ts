// Changes to data records by id (update, delete, batches across tables, links) and the questions
// asked about the tables as a whole (their names, an app's newest record).
import type { GatewayDb } from './clients';
import {
  changeRecords,
  insertStatements,
  newRecord,
  recordEvents,
  removeRecords,
  sumBytes,
  type LocatedRecord,
  type NewRecord,
  type RecordJson,
  type TableName,
} from './data';
import { eventStatements, type Actor } from './outbox';
import { ReadRouting } from './replica';
import { sqlOn, statement, textPerRows, type Sql, type Statement } from './sql';
import { recordUsage, UNLIMITED, type QuotaDefaults } from './usage';

/** A record with the account that wrote it (null for records older than that column). */
export interface OwnedRecord extends LocatedRecord {
  userId: string | null;
  /** What it counts in the usage (the bytes of its JSON text). */
  bytes: number;
}

/** A record of a batch, and the records to store linked to it. */
export interface BatchRow {
  table: TableName;
  data: RecordJson;
  links: { table: TableName; data: RecordJson }[];
}

/** A stored record of a batch, with its id and JSON text, and the records stored linked to it. */
export interface LinkedRecord extends NewRecord {
  links: NewRecord[];
}

/** Decides, with the records locked, whether the change may go ahead; throws to refuse it. */
export type ChangeCheck = (found: OwnedRecord[]) => Promise<void> | void;

const OWNED_COLUMNS = `"recordId", "namespace", "endpoint", "data", "userId"`;

/** Replaces one record's data ($2 the record, $3 its JSON, $4 its bytes). */
const UPDATE_RECORD = `UPDATE "DataRecord" SET "data" = $3::jsonb, "bytes" = $4::int WHERE "instanceId" = $1::uuid AND "recordId" = $2::uuid`;

export class DataChangeRepository {
  private readonly sql: Sql;

  /** `reads` learns of every write here (see ReadRouting); `quotas`: the cluster's, absent only for tools that read. */
  constructor(
    private readonly db: GatewayDb,
    private readonly reads = new ReadRouting(db),
    private readonly quotas: QuotaDefaults = UNLIMITED,
  ) {
    this.sql = sqlOn(db.pool);
  }

  /** The records with these ids (any that exist), with their writer. */
  find(instanceId: string, recordIds: string[]): Promise<OwnedRecord[]> {
    return selectOwned(this.sql, instanceId, recordIds, false);
  }

  /**
   * Replaces the data of the records, all or none: they are locked, `check` judges them, then their
   * usage, rows and events go in one batch with the commit. Returned in the order given.
   */
  update(instanceId: string, changes: { recordId: string; data: RecordJson }[], check: ChangeCheck, actor: Actor): Promise<OwnedRecord[]> {
    const change = changeRecords(this.db.pool, instanceId, this.quotas, async (tx, refill) => {
      const found = await selectOwned(
        tx,
        instanceId,
        changes.map((c) => c.recordId),
        true,
      );
      await check(found);
      const byId = new Map(found.map((record) => [record.recordId, record]));
      const updated = changes.flatMap(({ recordId, data: { data, json, bytes } }) => {
        const record = byId.get(recordId);
        if (!record) return [];
        const { namespace, endpoint, userId, bytes: before } = record;
        return [{ recordId, namespace, endpoint, data, userId, json, bytes, before }];
      });
      const growth = updated.reduce((total, r) => total + r.bytes - r.before, 0);
      await refill(growth);
      await tx.finish([
        ...recordUsage(instanceId, 0, growth, this.quotas.recordsBytes),
        ...updated.map((r) => statement(UPDATE_RECORD, [instanceId, r.recordId, r.json, r.bytes])),
        ...eventStatements(instanceId, recordEvents('record.updated', updated), actor),
      ]);
      return updated.map(({ recordId, namespace, endpoint, data, userId, bytes }) => ({
        recordId,
        namespace,
        endpoint,
        data,
        userId,
        bytes,
      }));
    });
    return this.reads.written(instanceId, change);
  }

  /** Removes the records, all or none, once `check` has judged them locked; the number removed. */
  remove(instanceId: string, recordIds: string[], check: ChangeCheck, actor: Actor): Promise<number> {
    return this.reads.transaction(instanceId, async (tx) => {
      await check(await selectOwned(tx, instanceId, recordIds, true));
      return removeRecords(
        tx,
        `DELETE FROM "DataRecord" WHERE "instanceId" = $1::uuid AND "recordId" = ANY($2::uuid[])
        RETURNING "recordId", "namespace", "endpoint", "bytes"`,
        [instanceId, recordIds],
        this.quotas,
        actor,
      );
    });
  }

  /** Stores a batch across tables in one transaction and one round trip: each row, its links, linked both ways. */
  async insertBatch(instanceId: string, userId: string, rows: BatchRow[], actor: Actor): Promise<LinkedRecord[]> {
    const saved = rows.map((row) => newRecord(row.table, row.data));
    const links = rows.map((row) => row.links.map((link) => newRecord(link.table, link.data)));
    const all = [...saved, ...links.flat()];
    const pairs = saved.flatMap((record, i) => (links[i] ?? []).map((link): [string, string] => [record.recordId, link.recordId]));
    const statements = [...insertStatements(instanceId, userId, all, this.quotas, actor), ...linkStatements(instanceId, pairs)];
    await this.reads.written(
      instanceId,
      changeRecords(this.db.pool, instanceId, this.quotas, async (tx, refill) => {
        await refill(sumBytes(all));
        await tx.finish(statements);
      }),
    );
    return saved.map((record, i) => Object.assign(record, { links: links[i] ?? [] }));
  }

  /** Links every pair of the records (both ways); linking again is harmless. */
  async group(instanceId: string, recordIds: string[], check: ChangeCheck): Promise<void> {
    await this.reads.transaction(instanceId, async (tx) => {
      await check(await selectOwned(tx, instanceId, recordIds, true));
      const pairs = recordIds.flatMap((a, i) => recordIds.slice(i + 1).map((b): [string, string] => [a, b]));
      await tx.finish(linkStatements(instanceId, pairs));
    });
  }

  /** The records linked to each of these records. */
  async linksOf(instanceId: string, recordIds: string[]): Promise<Map<string, LocatedRecord[]>> {
    const rows = await this.sql.prepared<LocatedRecord & { of: string }>(
      `SELECT l."recordId" AS "of", r."recordId", r."namespace", r."endpoint", r."data"
      FROM "DataRecordLink" l
      JOIN "DataRecord" r ON r."instanceId" = l."instanceId" AND r."recordId" = l."linkedId"
      WHERE l."instanceId" = $1::uuid AND l."recordId" = ANY($2::uuid[])
      ORDER BY r."seq"`,
      [instanceId, recordIds],
    );
    const links = new Map<string, LocatedRecord[]>();
    for (const { of, ...record } of rows) links.set(of, [...(links.get(of) ?? []), record]);
    return links;
  }

  /** Every table that holds records: namespace → its endpoints, sorted. */
  async sources(instanceId: string): Promise<Record<string, string[]>> {
    // A loose index scan: one index probe per table, instead of reading every record's index entry.
    const rows = await this.sql.prepared<{ namespace: string; endpoint: string }>(
      `WITH RECURSIVE t AS (
        (SELECT "namespace", "endpoint" FROM "DataRecord" WHERE "instanceId" = $1::uuid
         ORDER BY "namespace", "endpoint" LIMIT 1)
        UNION ALL
        SELECT n."namespace", n."endpoint" FROM t, LATERAL (
          SELECT "namespace", "endpoint" FROM "DataRecord"
          WHERE "instanceId" = $1::uuid AND ("namespace", "endpoint") > (t."namespace", t."endpoint")
          ORDER BY "namespace", "endpoint" LIMIT 1) n
      )
      SELECT "namespace", "endpoint" FROM t`,
      [instanceId],
    );
    const sources: Record<string, string[]> = {};
    for (const { namespace, endpoint } of rows) (sources[namespace] ??= []).push(endpoint);
    return sources;
  }

  /** When the newest record of a namespace was written, or null when it has none. */
  async newestIn(instanceId: string, namespace: string): Promise<Date | null> {
    const [newest] = await this.sql.prepared<{ createdAt: Date }>(
      `SELECT "createdAt" FROM "DataRecord" WHERE "instanceId" = $1::uuid AND "namespace" = $2 ORDER BY "seq" DESC LIMIT 1`,
      [instanceId, namespace],
    );
    return newest?.createdAt ?? null;
  }
}

function selectOwned(sql: Sql, instanceId: string, recordIds: string[], lock: boolean): Promise<OwnedRecord[]> {
  // Locks in key order, so two changes over overlapping records cannot deadlock.
  const select = `SELECT ${OWNED_COLUMNS}, "bytes" FROM "DataRecord" WHERE "instanceId" = $1::uuid AND "recordId" = ANY($2::uuid[])`;
  return sql.prepared<OwnedRecord>(lock ? `${select} ORDER BY "recordId" FOR UPDATE` : `${select} ORDER BY "seq"`, [instanceId, recordIds]);
}

/** $1 instance, then each link's record and linked record. */
const insertLinks = textPerRows(
  (count) =>
    `INSERT INTO "DataRecordLink" ("instanceId", "recordId", "linkedId") VALUES ${Array.from(
      { length: count },
      (_, i) => `($1::uuid, $${2 + 2 * i}::uuid, $${3 + 2 * i}::uuid)`,
    ).join(', ')} ON CONFLICT DO NOTHING`,
);

/** Rows of one INSERT of links. */
const LINKS_PER_INSERT = 100;

/** The statements that link each pair both ways; a pair already linked is left as it is. */
function linkStatements(instanceId: string, pairs: [string, string][]): Statement[] {
  const both = pairs.flatMap(([a, b]): [string, string][] => [
    [a, b],
    [b, a],
  ]);
  const statements: Statement[] = [];
  for (let start = 0; start < both.length; start += LINKS_PER_INSERT) {
    const chunk = both.slice(start, start + LINKS_PER_INSERT);
    statements.push(statement(insertLinks(chunk.length), [instanceId, ...chunk.flat()]));
  }
  return statements;
}
