// Changes to data records by id (update, delete, batches across tables, links) and the questions
// asked about the tables as a whole (their names, an app's newest record).
import type { GatewayDb } from './clients';
import { insertRows, RECORD_OBJECT, recordBytes, withoutRecords, type LocatedRecord, type TableRow } from './data';
import { eventCte, eventValues, type Actor } from './outbox';
import { ReadRouting } from './replica';
import { sqlOn, type Sql } from './sql';
import { addRecordUsage, QuotaExceeded, refillRecordAllowance, UNLIMITED, type QuotaDefaults } from './usage';

/** A record with the account that wrote it (null for records older than that column). */
export interface OwnedRecord extends LocatedRecord {
  userId: string | null;
}

/** A row of a batch: a record and the records to store linked to it. */
export interface BatchRow extends TableRow {
  links: TableRow[];
}

export interface LinkedRecord extends LocatedRecord {
  links: LocatedRecord[];
}

/** Decides, with the records locked, whether the change may go ahead; throws to refuse it. */
export type ChangeCheck = (found: OwnedRecord[]) => Promise<void> | void;

const OWNED_COLUMNS = `"recordId", "namespace", "endpoint", "data", "userId"`;

/** Replaces the data of the records given as a JSON array of { recordId, data } ($2), in that order. */
const UPDATE_DATA = `WITH updated AS (
    UPDATE "DataRecord" AS r SET "data" = u.c->'data'
    FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS u(c, n)
    WHERE r."instanceId" = $1::uuid AND r."recordId" = (u.c->>'recordId')::uuid
    RETURNING r."recordId", r."namespace", r."endpoint", r."data", r."userId", u.n
  ),
  ${eventCte('updated', `'record.updated'`, RECORD_OBJECT, 3)}
  SELECT ${OWNED_COLUMNS} FROM updated ORDER BY n`;

/** What an update ($2, as UPDATE_DATA takes it) changes in record bytes. */
const GROWTH = `(SELECT coalesce(sum(${recordBytes("u.c->'data'")} - ${recordBytes('r."data"')}), 0)
    FROM jsonb_array_elements($2::jsonb) AS u(c)
    JOIN "DataRecord" r ON r."instanceId" = $1::uuid AND r."recordId" = (u.c->>'recordId')::uuid)`;

/**
 * Adds the growth of an update to the usage, before the update and in its transaction; no row when
 * the writer's allowance does not cover it (usage.ts; $3 the cluster's quota).
 */
const UPDATE_USAGE = `WITH ${addRecordUsage('0', GROWTH, '$3')} SELECT 1 FROM usage`;
const UPDATE_GROWTH = `SELECT ${GROWTH}::text AS "bytes"`;

/** Removes records by id ($2), out of the usage and with their events ($3…), in one statement. */
const DELETE_RECORDS = withoutRecords(
  `DELETE FROM "DataRecord" WHERE "instanceId" = $1::uuid AND "recordId" = ANY($2::uuid[])
  RETURNING "recordId", "namespace", "endpoint", "data"`,
  3,
);

export class DataChangeRepository {
  private readonly sql: Sql;

  /** `reads` learns of every write here (see ReadRouting); `quotas`: the cluster's, absent only for tools that read. */
  constructor(
    db: GatewayDb,
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
   * Replaces the data of the records, all or none: they are locked, `check` judges them, then one
   * statement updates them all. Returned in the order given.
   */
  update(instanceId: string, changes: { recordId: string; data: unknown }[], check: ChangeCheck, actor: Actor): Promise<OwnedRecord[]> {
    return this.reads.transaction(instanceId, async (tx) => {
      await check(
        await selectOwned(
          tx,
          instanceId,
          changes.map((c) => c.recordId),
          true,
        ),
      );
      const json = JSON.stringify(changes);
      const usage = [instanceId, json, this.quotas.recordsBytes];
      if ((await tx.prepared(UPDATE_USAGE, usage)).length === 0) {
        const [growth] = await tx.prepared<{ bytes: string }>(UPDATE_GROWTH, [instanceId, json]);
        const refilled = await refillRecordAllowance(tx, instanceId, Number(growth!.bytes), this.quotas.recordsBytes);
        if (!refilled || (await tx.prepared(UPDATE_USAGE, usage)).length === 0) throw new QuotaExceeded('records');
      }
      return tx.prepared<OwnedRecord>(UPDATE_DATA, [instanceId, json, ...eventValues(actor)]);
    });
  }

  /** Removes the records, all or none, once `check` has judged them locked; the number removed. */
  remove(instanceId: string, recordIds: string[], check: ChangeCheck, actor: Actor): Promise<number> {
    return this.reads.transaction(instanceId, async (tx) => {
      await check(await selectOwned(tx, instanceId, recordIds, true));
      const [row] = await tx.prepared<{ removed: number }>(DELETE_RECORDS, [instanceId, recordIds, ...eventValues(actor)]);
      return row?.removed ?? 0;
    });
  }

  /** Stores a batch across tables in one transaction: each row, then its links, linked both ways. */
  insertBatch(instanceId: string, userId: string, rows: BatchRow[], actor: Actor): Promise<LinkedRecord[]> {
    return this.reads.transaction(instanceId, async (tx) => {
      const saved = await insertRows(tx, instanceId, userId, rows, this.quotas, actor);
      const result: LinkedRecord[] = [];
      for (const [i, row] of rows.entries()) {
        const record = saved[i] as LocatedRecord;
        const links = row.links.length ? await insertRows(tx, instanceId, userId, row.links, this.quotas, actor) : [];
        await linkPairs(
          tx,
          instanceId,
          links.map((l) => [record.recordId, l.recordId]),
        );
        result.push({ ...record, links });
      }
      return result;
    });
  }

  /** Links every pair of the records (both ways); linking again is harmless. */
  async group(instanceId: string, recordIds: string[], check: ChangeCheck): Promise<void> {
    await this.reads.transaction(instanceId, async (tx) => {
      await check(await selectOwned(tx, instanceId, recordIds, true));
      const pairs = recordIds.flatMap((a, i) => recordIds.slice(i + 1).map((b): [string, string] => [a, b]));
      await linkPairs(tx, instanceId, pairs);
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
  const select = `SELECT ${OWNED_COLUMNS} FROM "DataRecord" WHERE "instanceId" = $1::uuid AND "recordId" = ANY($2::uuid[])`;
  return sql.prepared<OwnedRecord>(lock ? `${select} ORDER BY "recordId" FOR UPDATE` : `${select} ORDER BY "seq"`, [instanceId, recordIds]);
}

/** Links both ways; a pair already linked is left as it is. */
async function linkPairs(sql: Sql, instanceId: string, pairs: [string, string][]): Promise<void> {
  if (pairs.length === 0) return;
  await sql.count(
    `INSERT INTO "DataRecordLink" ("instanceId", "recordId", "linkedId")
    SELECT $1::uuid, p."recordId", p."linkedId" FROM unnest($2::uuid[], $3::uuid[]) AS p("recordId", "linkedId")
    ON CONFLICT DO NOTHING`,
    [instanceId, [...pairs.map(([a]) => a), ...pairs.map(([, b]) => b)], [...pairs.map(([, b]) => b), ...pairs.map(([a]) => a)]],
  );
}
