// What each instance holds (InstanceUsage): completed and trashed files with their bytes, data records
// with the bytes of their JSON text. Kept exact by the statements that change what it counts, in their
// transaction (files.ts, data.ts, data-changes.ts), so a quota is checked against it atomically.
//
// Files are counted on the instance's share-0 row, whose lock makes concurrent completions take turns.
// Records are written far more often, and one row would make every record write of an instance wait for
// the commit of the one before; so they are counted on the row ("share") of the writer's connection, one
// of SHARES, each holding an allowance: bytes its writers may add without looking further. The
// allowances and the bytes stored never add up to more than the quota, so writers that each stay within
// their own share's allowance cannot pass it together. A write its allowance cannot cover refills it
// (refillRecordAllowance), one refill of an instance at a time. `verify` recounts everything, for the
// operator's `usage verify`.
import type { GatewayDb } from './clients';
import { sqlOn, type Sql } from './sql';

export interface InstanceUsage {
  /** Completed and trashed files, and their bytes. */
  files: number;
  fileBytes: number;
  /** Data records, and the bytes of their JSON text. */
  records: number;
  recordBytes: number;
}

/** The cluster's quotas, for instances whose own are not set (QUOTA_BYTES, QUOTA_RECORDS_BYTES). */
export interface QuotaDefaults {
  bytes: number;
  recordsBytes: number;
}

/** No quota: for repositories of processes that never write what a quota bounds (the worker, tools). */
export const UNLIMITED: QuotaDefaults = { bytes: Number.MAX_SAFE_INTEGER, recordsBytes: Number.MAX_SAFE_INTEGER };

/** A write refused because it would take the instance past its quota; nothing was written. */
export class QuotaExceeded extends Error {
  constructor(readonly kind: 'files' | 'records') {
    super(`The instance's ${kind === 'files' ? 'file' : 'data record'} quota is used up`);
  }
}

/** An instance whose stored usage differs from a recount. */
export interface UsageDrift {
  address: string;
  stored: InstanceUsage;
  counted: InstanceUsage;
}

/** What a file adds while completed or trashed: `bytes` may be negative (a purge, a smaller re-upload). */
export interface FileUsageChange {
  files: number;
  bytes: number;
}

/** The usage a recount finds ($1 an instance id, or null for all): the rule the statements keep. */
const COUNTED = `SELECT i."id" AS "instanceId", i."address",
    coalesce(f."files", 0)::text AS "files", coalesce(f."fileBytes", 0)::text AS "fileBytes",
    coalesce(r."records", 0)::text AS "records", coalesce(r."recordBytes", 0)::text AS "recordBytes"
  FROM "Instance" i
  LEFT JOIN LATERAL (SELECT count(*) AS "files", sum(coalesce(f."size", 0)) AS "fileBytes" FROM "File" f
    WHERE f."instanceId" = i."id" AND (f."status" = 'Completed' OR f."trashedAt" IS NOT NULL)) f ON true
  LEFT JOIN LATERAL (SELECT count(*) AS "records", sum(octet_length(d."data"::text)) AS "recordBytes" FROM "DataRecord" d
    WHERE d."instanceId" = i."id") r ON true
  WHERE ($1::uuid IS NULL OR i."id" = $1::uuid)`;

/** Rows across the instance's shares can be negative (a record deleted on another share than it was added on); their sum is not. */
const STORED = `SELECT u."instanceId", sum(u."files")::text AS "files", sum(u."fileBytes")::text AS "fileBytes",
    sum(u."records")::text AS "records", sum(u."recordBytes")::text AS "recordBytes"
  FROM "InstanceUsage" u WHERE ($1::uuid IS NULL OR u."instanceId" = $1::uuid) GROUP BY u."instanceId"`;

/** The instance's usage summed over its shares, to join as `u` on "instanceId" (one instance: $1). */
export const SUMMED_USAGE = `(SELECT s."instanceId", sum(s."files") AS "files", sum(s."fileBytes") AS "fileBytes",
    sum(s."records") AS "records", sum(s."recordBytes") AS "recordBytes"
  FROM "InstanceUsage" s WHERE s."instanceId" = $1::uuid GROUP BY s."instanceId")`;

type UsageRow = { instanceId: string; files: string; fileBytes: string; records: string; recordBytes: string };

const EMPTY: InstanceUsage = { files: 0, fileBytes: 0, records: 0, recordBytes: 0 };

function usageOf(row: UsageRow | undefined): InstanceUsage {
  if (!row) return { ...EMPTY };
  return { files: Number(row.files), fileBytes: Number(row.fileBytes), records: Number(row.records), recordBytes: Number(row.recordBytes) };
}

const ENSURE_ROW = `INSERT INTO "InstanceUsage" ("instanceId", "share") VALUES ($1::uuid, 0) ON CONFLICT ("instanceId", "share") DO NOTHING`;

/**
 * $2 files, $3 bytes, $4 the cluster's quota. A change that adds bytes passes only while the total
 * stays within the instance's quota; the row lock makes concurrent completions take turns, and each
 * sees the total the one before it left (READ COMMITTED re-checks the condition on the newest row).
 */
const CHANGE_FILES = `UPDATE "InstanceUsage" u SET "files" = u."files" + $2, "fileBytes" = u."fileBytes" + $3
  FROM "Instance" i
  WHERE u."instanceId" = $1::uuid AND u."share" = 0 AND i."id" = $1::uuid
    AND ($3::bigint <= 0 OR u."fileBytes" + $3::bigint <= coalesce(i."quotaBytes", $4::bigint))
  RETURNING u."fileBytes"`;

/**
 * Adds a file change to the instance's usage, in the caller's transaction; false (nothing changed)
 * when it adds bytes past the quota. Two statements: the row made if missing, then the conditional
 * change.
 */
export async function changeFileUsage(tx: Sql, instanceId: string, change: FileUsageChange, defaultQuota: number): Promise<boolean> {
  await tx.prepared(ENSURE_ROW, [instanceId]);
  const rows = await tx.prepared(CHANGE_FILES, [instanceId, change.files, change.bytes, defaultQuota]);
  return rows.length > 0;
}

/** How many rows an instance's record writes are spread over. */
const SHARES = 16;

/**
 * The share of the statement's connection. The same for every statement of a transaction, so a
 * transaction holds at most its own share's lock (and, refilling, others it need not wait for).
 */
const OWN_SHARE = `(pg_backend_pid() % ${SHARES})::int2`;

/** The instance's records quota: its own, else the cluster's (`quota`, a bound parameter). */
const recordsQuota = (quota: string) =>
  `coalesce((SELECT i."quotaRecordsBytes" FROM "Instance" i WHERE i."id" = $1::uuid), ${quota}::bigint)`;

/**
 * The CTE `usage` adding records to the instance's usage inside a statement that writes them ($1 is
 * the instance): `records` and `bytes` are SQL over the statement's other CTEs, `quota` the bound
 * parameter of the cluster's quota. Bytes come out of the share's allowance, granted under the quota in
 * force; no row when the allowance does not cover them (or the share has no row yet), so the write that
 * depends on it does nothing: the caller refills and tries again. A change that frees bytes passes on
 * an existing row, and adds them to the allowance. The share's row stays locked until commit, as the one
 * row did; only writers of the same share wait.
 */
export const addRecordUsage = (records: string, bytes: string, quota: string) => `usage AS (
    UPDATE "InstanceUsage" u SET "records" = u."records" + c.n, "recordBytes" = u."recordBytes" + c.b,
      "recordAllowance" = u."recordAllowance" - c.b
    FROM (SELECT ${records} AS n, ${bytes} AS b) c
    WHERE u."instanceId" = $1::uuid AND u."share" = ${OWN_SHARE}
      AND (c.b <= 0 OR (u."recordAllowance" >= c.b AND u."allowanceQuota" = ${recordsQuota(quota)}))
    RETURNING u."instanceId"
  )`;

/** The CTE `usage` taking records away (a delete: never refused); `records` and `bytes` as in addRecordUsage. */
export const removeRecordUsage = (records: string, bytes: string) => `usage AS (
    INSERT INTO "InstanceUsage" AS u ("instanceId", "share", "records", "recordBytes", "recordAllowance")
    SELECT $1::uuid, ${OWN_SHARE}, -c.n, -c.b, c.b FROM (SELECT ${records} AS n, ${bytes} AS b) c
    ON CONFLICT ("instanceId", "share") DO UPDATE SET "records" = u."records" + EXCLUDED."records",
      "recordBytes" = u."recordBytes" + EXCLUDED."recordBytes", "recordAllowance" = u."recordAllowance" + EXCLUDED."recordAllowance"
    RETURNING u."instanceId"
  )`;

/** Locks a share's row ($2; made if missing): the writer's own, or -1, the instance's refill lock. */
const LOCK_SHARE = (share: string) => `INSERT INTO "InstanceUsage" AS u ("instanceId", "share") VALUES ($1::uuid, ${share})
  ON CONFLICT ("instanceId", "share") DO UPDATE SET "share" = u."share" RETURNING u."share"`;
const LOCK_OWN_SHARE = LOCK_SHARE(OWN_SHARE);
const LOCK_REFILLS = LOCK_SHARE('-1::int2');

/**
 * $2 the bytes needed, $3 the cluster's quota. Counts what is left of the quota beside the bytes stored
 * and the other shares' allowances, and grants the writer's share the bytes needed and a sixteenth of
 * what is left beyond them (later writes then need no refill). When that is less than needed, it first
 * takes back the allowances of the other shares no writer holds now (SKIP LOCKED: it never waits; a
 * row locked so returns its newest values, so what a writer used since the snapshot is not given twice). No
 * row when even then less is left than needed; a change that frees bytes needs nothing, and always
 * gets its row.
 */
const GRANT = `WITH "quota" AS (SELECT ${recordsQuota('$3')} AS "bytes"),
  "shares" AS (SELECT s."share", s."recordBytes", s."recordAllowance" FROM "InstanceUsage" s WHERE s."instanceId" = $1::uuid),
  "unclaimed" AS (
    SELECT (SELECT q."bytes" FROM "quota" q) - sum(s."recordBytes")
      - sum(CASE WHEN s."share" = ${OWN_SHARE} THEN 0 ELSE s."recordAllowance" END) AS "bytes"
    FROM "shares" s
  ),
  "claimed" AS (
    SELECT s."share", s."recordAllowance" FROM "InstanceUsage" s
    WHERE s."instanceId" = $1::uuid AND (SELECT c."bytes" FROM "unclaimed" c) < $2::bigint
      AND s."share" >= 0 AND s."share" <> ${OWN_SHARE} AND s."recordAllowance" <> 0
    FOR UPDATE SKIP LOCKED
  ),
  "idle" AS (
    UPDATE "InstanceUsage" u SET "recordAllowance" = 0 FROM "claimed" c
    WHERE u."instanceId" = $1::uuid AND u."share" = c."share"
    RETURNING u."share"
  ),
  "left" AS (
    SELECT c."bytes" + coalesce((SELECT sum(d."recordAllowance") FROM "claimed" d), 0) AS "bytes" FROM "unclaimed" c
  )
  UPDATE "InstanceUsage" u SET "recordAllowance" = greatest(0, least(l."bytes", $2::bigint + (l."bytes" - $2::bigint) / 16)),
    "allowanceQuota" = (SELECT q."bytes" FROM "quota" q)
  FROM "left" l
  WHERE u."instanceId" = $1::uuid AND u."share" = ${OWN_SHARE} AND ($2::bigint <= 0 OR l."bytes" >= $2::bigint)
  RETURNING u."share"`;

/**
 * Grants the writer's share enough allowance for `need` more record bytes, in the writer's transaction
 * (whose next statement then writes them); false when the quota leaves less than that. Its own share is
 * locked first, then the instance's refill lock: refills take turns, and each reads (a new snapshot)
 * what the one before granted. A transaction waits only for its own share and for the refill lock,
 * neither while holding another share, so writers and refills cannot deadlock.
 */
export async function refillRecordAllowance(tx: Sql, instanceId: string, need: number, defaultQuota: number): Promise<boolean> {
  await tx.prepared(LOCK_OWN_SHARE, [instanceId]);
  await tx.prepared(LOCK_REFILLS, [instanceId]);
  return (await tx.prepared(GRANT, [instanceId, need, defaultQuota])).length > 0;
}

/**
 * $1 instance: its usage counted from its rows (the rule COUNTED states), replacing the kept one on
 * share 0; the other shares are emptied by RECOUNT_OTHERS, and every allowance is taken back.
 */
const RECOUNT = `INSERT INTO "InstanceUsage" ("instanceId", "share", "files", "fileBytes", "records", "recordBytes", "recordAllowance")
  SELECT $1::uuid, 0, f."files", f."fileBytes", r."records", r."recordBytes", 0
  FROM (SELECT count(*) AS "files", coalesce(sum(coalesce(f."size", 0)), 0) AS "fileBytes" FROM "File" f
    WHERE f."instanceId" = $1::uuid AND (f."status" = 'Completed' OR f."trashedAt" IS NOT NULL)) f,
  (SELECT count(*) AS "records", coalesce(sum(octet_length(d."data"::text)), 0) AS "recordBytes" FROM "DataRecord" d
    WHERE d."instanceId" = $1::uuid) r
  ON CONFLICT ("instanceId", "share") DO UPDATE SET "files" = EXCLUDED."files", "fileBytes" = EXCLUDED."fileBytes",
    "records" = EXCLUDED."records", "recordBytes" = EXCLUDED."recordBytes", "recordAllowance" = 0`;
const RECOUNT_OTHERS = `UPDATE "InstanceUsage" SET "files" = 0, "fileBytes" = 0, "records" = 0, "recordBytes" = 0, "recordAllowance" = 0
  WHERE "instanceId" = $1::uuid AND "share" <> 0`;

/**
 * Sets the instance's usage from a count of its rows, in the caller's transaction: for writes that
 * restore many rows at once (an import), where counting once beats keeping the count row by row.
 */
export async function recountUsage(tx: Sql, instanceId: string): Promise<void> {
  await tx.count(RECOUNT, [instanceId]);
  await tx.count(RECOUNT_OTHERS, [instanceId]);
}

/** What GET /system/status shows of an instance: its usage and quotas, last activity and owner's e-mail. */
export interface InstanceStatus {
  usage: InstanceUsage;
  /** The instance's own quotas; null: the cluster's. */
  quotaBytes: number | null;
  quotaRecordsBytes: number | null;
  lastActiveAt: Date | null;
  ownerEmail: string | null;
}

const STATUS = `SELECT i."quotaBytes"::text AS "quotaBytes", i."quotaRecordsBytes"::text AS "quotaRecordsBytes", i."lastActiveAt",
    (SELECT o."email" FROM "User" o WHERE o."instanceId" = i."id" AND o."kind" = 'owner' LIMIT 1) AS "ownerEmail",
    coalesce(u."files", 0)::text AS "files", coalesce(u."fileBytes", 0)::text AS "fileBytes",
    coalesce(u."records", 0)::text AS "records", coalesce(u."recordBytes", 0)::text AS "recordBytes"
  FROM "Instance" i LEFT JOIN ${SUMMED_USAGE} u ON u."instanceId" = i."id"
  WHERE i."id" = $1::uuid`;

/** The usage of instances as the statements keep it, and its recount. */
export class UsageRepository {
  private readonly sql: Sql;

  constructor(db: GatewayDb) {
    this.sql = sqlOn(db.pool);
  }

  /** The instance's usage (all zero before its first write). */
  async find(instanceId: string): Promise<InstanceUsage> {
    const [row] = await this.sql.prepared<UsageRow>(STORED, [instanceId]);
    return usageOf(row);
  }

  /** The instance's usage with what the owner's status page shows beside it; null when there is no such instance. */
  async status(instanceId: string): Promise<InstanceStatus | null> {
    type Row = UsageRow & {
      quotaBytes: string | null;
      quotaRecordsBytes: string | null;
      lastActiveAt: Date | null;
      ownerEmail: string | null;
    };
    const [row] = await this.sql.prepared<Row>(STATUS, [instanceId]);
    if (!row) return null;
    const amount = (value: string | null) => (value === null ? null : Number(value));
    return {
      usage: usageOf(row),
      quotaBytes: amount(row.quotaBytes),
      quotaRecordsBytes: amount(row.quotaRecordsBytes),
      lastActiveAt: row.lastActiveAt,
      ownerEmail: row.ownerEmail,
    };
  }

  /** The cluster's totals (Prometheus): no instance named. */
  async totals(): Promise<InstanceUsage> {
    const [row] = await this.sql.prepared<UsageRow>(
      `SELECT '' AS "instanceId", coalesce(sum("files"), 0)::text AS "files", coalesce(sum("fileBytes"), 0)::text AS "fileBytes",
        coalesce(sum("records"), 0)::text AS "records", coalesce(sum("recordBytes"), 0)::text AS "recordBytes" FROM "InstanceUsage"`,
      [],
    );
    return usageOf(row);
  }

  /**
   * Recounts every instance (or one) and lists those whose kept usage differs. A write that lands between
   * the two reads shows as a drift that a second run does not repeat: the operator runs it again.
   */
  async verify(instanceId: string | null = null): Promise<{ checked: number; drift: UsageDrift[] }> {
    const [counted, stored] = await Promise.all([
      this.sql.prepared<UsageRow & { address: string }>(COUNTED, [instanceId]),
      this.sql.prepared<UsageRow>(STORED, [instanceId]),
    ]);
    const kept = new Map(stored.map((row) => [row.instanceId, usageOf(row)]));
    const drift: UsageDrift[] = [];
    for (const row of counted) {
      const now = usageOf(row);
      const was = kept.get(row.instanceId) ?? { ...EMPTY };
      if ((Object.keys(EMPTY) as (keyof InstanceUsage)[]).some((key) => now[key] !== was[key])) {
        drift.push({ address: row.address, stored: was, counted: now });
      }
    }
    return { checked: counted.length, drift };
  }
}
