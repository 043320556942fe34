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
import { postgresErrorCode, sqlOn, statement, type Sql, type Statement } from './sql';

const CHECK_VIOLATION = '23514';

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

/**
 * What a recount finds ($1 an instance id, or null for all): the rule the statements keep, per table and
 * grouped by instance, so each runs on the instance's shards alone (on Citus, one task per shard).
 */
const COUNTED_FILES = `SELECT f."instanceId", count(*)::text AS "files", sum(coalesce(f."size", 0))::text AS "fileBytes" FROM "File" f
  WHERE ($1::uuid IS NULL OR f."instanceId" = $1::uuid) AND (f."status" = 'Completed' OR f."trashedAt" IS NOT NULL)
  GROUP BY f."instanceId"`;
const COUNTED_RECORDS = `SELECT d."instanceId", count(*)::text AS "records", sum(d."bytes")::text AS "recordBytes" FROM "DataRecord" d
  WHERE ($1::uuid IS NULL OR d."instanceId" = $1::uuid) GROUP BY d."instanceId"`;
const ADDRESSES = `SELECT i."id", i."address" FROM "Instance" i WHERE ($1::uuid IS NULL OR i."id" = $1::uuid)`;

/** Rows across the instance's shares can be negative (a record deleted on another share than it was added on); their sum is not. */
const STORED = `SELECT u."instanceId", sum(u."files")::text AS "files", sum(u."fileBytes")::text AS "fileBytes",
    sum(u."records")::text AS "records", sum(u."recordBytes")::text AS "recordBytes"
  FROM "InstanceUsage" u WHERE ($1::uuid IS NULL OR u."instanceId" = $1::uuid) GROUP BY u."instanceId"`;

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

/** The writer's share of the instance, made if missing (with no allowance). */
const ENSURE_OWN_SHARE = `INSERT INTO "InstanceUsage" ("instanceId", "share") VALUES ($1::uuid, ${OWN_SHARE}) ON CONFLICT ("instanceId", "share") DO NOTHING`;

/**
 * $1 the instance, $2 records, $3 their bytes (both negative for a removal), $4 the cluster's records
 * quota. Counts records on the writer's share and takes their bytes out of its allowance (a removal gives
 * them back). It never asks first: when the allowance cannot cover the bytes, or was granted under
 * another cluster quota than the writer's, the allowance would fall below zero and the CHECK
 * "InstanceUsage_allowance_covers" fails the statement, and with it the write's batch; the writer then
 * refills and writes again (changeRecords, data.ts).
 */
const RECORD_USAGE = `UPDATE "InstanceUsage" u SET "records" = u."records" + $2::bigint, "recordBytes" = u."recordBytes" + $3::bigint,
    "recordAllowance" = CASE WHEN $3::bigint <= 0 OR u."allowanceDefault" IS NULL OR u."allowanceDefault" = $4::bigint
      THEN u."recordAllowance" - $3::bigint ELSE -1 END
  WHERE u."instanceId" = $1::uuid AND u."share" = ${OWN_SHARE}`;

/** The statements that count a change of records in the instance's usage: the share made if missing, then RECORD_USAGE. */
export function recordUsage(instanceId: string, records: number, bytes: number, defaultQuota: number): Statement[] {
  return [statement(ENSURE_OWN_SHARE, [instanceId]), statement(RECORD_USAGE, [instanceId, records, bytes, defaultQuota])];
}

const ALLOWANCE_CHECK = 'InstanceUsage_allowance_covers';

/**
 * Whether a write failed because its share's allowance could not cover it (RECORD_USAGE's CHECK). Citus
 * passes on a worker's error without its constraint field, so its message is read too.
 */
export function allowanceShort(error: unknown): boolean {
  if (postgresErrorCode(error) !== CHECK_VIOLATION) return false;
  const { constraint, message } = error as { constraint?: string; message?: string };
  return constraint === ALLOWANCE_CHECK || Boolean(message?.includes(`"${ALLOWANCE_CHECK}"`));
}

/** Locks a share's row (made if missing): the writer's own, or -1, the instance's refill lock. */
const LOCK_SHARE = (share: string) => `INSERT INTO "InstanceUsage" AS u ("instanceId", "share") VALUES ($1::uuid, ${share})
  ON CONFLICT ("instanceId", "share") DO UPDATE SET "share" = u."share" RETURNING u."share"`;
const LOCK_OWN_SHARE = LOCK_SHARE(OWN_SHARE);
const LOCK_REFILLS = LOCK_SHARE('-1::int2');
const OWN_QUOTA = `SELECT i."quotaRecordsBytes"::text AS "quota" FROM "Instance" i WHERE i."id" = $1::uuid`;
const SHARES_OF = `SELECT s."share", s."recordBytes"::text AS "recordBytes", s."recordAllowance"::text AS "recordAllowance"
  FROM "InstanceUsage" s WHERE s."instanceId" = $1::uuid AND s."share" >= 0`;
/** The other shares' allowances no writer holds now: SKIP LOCKED never waits, and returns the newest values of the rows it locks. */
const IDLE_ALLOWANCES = `SELECT s."share", s."recordAllowance"::text AS "recordAllowance" FROM "InstanceUsage" s
  WHERE s."instanceId" = $1::uuid AND s."share" >= 0 AND s."share" <> $2::int2 AND s."recordAllowance" <> 0
  FOR UPDATE SKIP LOCKED`;
const TAKE_BACK = `UPDATE "InstanceUsage" SET "recordAllowance" = 0 WHERE "instanceId" = $1::uuid AND "share" = ANY($2::int2[])`;
const GRANT = `UPDATE "InstanceUsage" SET "recordAllowance" = $3::bigint, "allowanceDefault" = $4::bigint
  WHERE "instanceId" = $1::uuid AND "share" = $2::int2`;

const sum = (values: string[]) => values.reduce((total, value) => total + Number(value), 0);

/**
 * Grants the writer's share enough allowance for `need` more record bytes, in the writer's transaction
 * (whose next statements then write them); false when the quota leaves less than that. Its own share is
 * locked first, then the instance's refill lock: refills take turns, and each reads (a new snapshot)
 * what the one before granted. What is left of the quota beside the bytes stored and the other shares'
 * allowances is granted: the bytes needed and a sixteenth of the rest (later writes then need no
 * refill). When that is less than needed, the allowances of shares no writer holds now are taken back
 * first; the newest values of the rows taken make up for what their writers used since the snapshot, so
 * nothing is given twice. A transaction waits only for its own share and for the refill lock, neither
 * while holding another share, so writers and refills cannot deadlock. A change that frees bytes needs
 * nothing, and always gets its grant.
 */
export async function refillRecordAllowance(tx: Sql, instanceId: string, need: number, defaultQuota: number): Promise<boolean> {
  const [own] = await tx.prepared<{ share: number }>(LOCK_OWN_SHARE, [instanceId]);
  const share = own!.share;
  await tx.prepared(LOCK_REFILLS, [instanceId]);
  const [instance] = await tx.prepared<{ quota: string | null }>(OWN_QUOTA, [instanceId]);
  const ownQuota = instance?.quota == null ? null : Number(instance.quota);
  const shares = await tx.prepared<{ share: number; recordBytes: string; recordAllowance: string }>(SHARES_OF, [instanceId]);
  const others = shares.filter((s) => s.share !== share);
  let left = (ownQuota ?? defaultQuota) - sum(shares.map((s) => s.recordBytes)) - sum(others.map((s) => s.recordAllowance));
  if (left < need) {
    const idle = await tx.prepared<{ share: number; recordAllowance: string }>(IDLE_ALLOWANCES, [instanceId, share]);
    if (idle.length > 0) {
      await tx.count(TAKE_BACK, [instanceId, idle.map((s) => s.share)]);
      left += sum(idle.map((s) => s.recordAllowance));
    }
  }
  if (need > 0 && left < need) return false;
  const grant = Math.max(0, Math.min(left, need + Math.floor((left - need) / SHARES)));
  await tx.count(GRANT, [instanceId, share, grant, ownQuota === null ? defaultQuota : null]);
  return true;
}

/**
 * $1 instance: its usage counted from its rows (the rule COUNTED states), replacing the kept one on
 * share 0; the other shares are emptied by RECOUNT_OTHERS, and every allowance is taken back.
 */
const RECOUNT = `INSERT INTO "InstanceUsage" ("instanceId", "share", "files", "fileBytes", "records", "recordBytes", "recordAllowance")
  SELECT $1::uuid, 0, f."files", f."fileBytes", r."records", r."recordBytes", 0
  FROM (SELECT count(*) AS "files", coalesce(sum(coalesce(f."size", 0)), 0) AS "fileBytes" FROM "File" f
    WHERE f."instanceId" = $1::uuid AND (f."status" = 'Completed' OR f."trashedAt" IS NOT NULL)) f,
  (SELECT count(*) AS "records", coalesce(sum(d."bytes"), 0) AS "recordBytes" FROM "DataRecord" d
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

/** Every part filtered on the bound instance ($1), the reference table's row and the tenant tables' alike. */
const STATUS = `SELECT i."quotaBytes"::text AS "quotaBytes", i."quotaRecordsBytes"::text AS "quotaRecordsBytes", i."lastActiveAt",
    (SELECT o."email" FROM "User" o WHERE o."instanceId" = $1::uuid AND o."kind" = 'owner' LIMIT 1) AS "ownerEmail",
    u."files", u."fileBytes", u."records", u."recordBytes"
  FROM "Instance" i,
    (SELECT coalesce(sum(s."files"), 0)::text AS "files", coalesce(sum(s."fileBytes"), 0)::text AS "fileBytes",
      coalesce(sum(s."records"), 0)::text AS "records", coalesce(sum(s."recordBytes"), 0)::text AS "recordBytes"
     FROM "InstanceUsage" s WHERE s."instanceId" = $1::uuid) u
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
      `SELECT '' AS "instanceId", coalesce(sum(u."files"), 0)::text AS "files", coalesce(sum(u."fileBytes"), 0)::text AS "fileBytes",
        coalesce(sum(u."records"), 0)::text AS "records", coalesce(sum(u."recordBytes"), 0)::text AS "recordBytes"
       FROM "InstanceUsage" u JOIN "Instance" i ON i."id" = u."instanceId"`,
      [],
    );
    return usageOf(row);
  }

  /**
   * Recounts every instance (or one) and lists those whose kept usage differs. A write that lands between
   * the two reads shows as a drift that a second run does not repeat: the operator runs it again.
   */
  async verify(instanceId: string | null = null): Promise<{ checked: number; drift: UsageDrift[] }> {
    type Files = { instanceId: string; files: string; fileBytes: string };
    type Records = { instanceId: string; records: string; recordBytes: string };
    const [instances, files, records, stored] = await Promise.all([
      this.sql.prepared<{ id: string; address: string }>(ADDRESSES, [instanceId]),
      this.sql.prepared<Files>(COUNTED_FILES, [instanceId]),
      this.sql.prepared<Records>(COUNTED_RECORDS, [instanceId]),
      this.sql.prepared<UsageRow>(STORED, [instanceId]),
    ]);
    const filesOf = new Map(files.map((row) => [row.instanceId, row]));
    const recordsOf = new Map(records.map((row) => [row.instanceId, row]));
    const kept = new Map(stored.map((row) => [row.instanceId, usageOf(row)]));
    const drift: UsageDrift[] = [];
    for (const { id, address } of instances) {
      const f = filesOf.get(id);
      const r = recordsOf.get(id);
      const now = usageOf({
        instanceId: id,
        files: f?.files ?? '0',
        fileBytes: f?.fileBytes ?? '0',
        records: r?.records ?? '0',
        recordBytes: r?.recordBytes ?? '0',
      });
      const was = kept.get(id) ?? { ...EMPTY };
      if ((Object.keys(EMPTY) as (keyof InstanceUsage)[]).some((key) => now[key] !== was[key])) {
        drift.push({ address, stored: was, counted: now });
      }
    }
    return { checked: instances.length, drift };
  }
}
