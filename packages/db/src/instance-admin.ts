// The operator's view of the instances (the admin API): listing and search with usage and quotas, the
// quotas themselves, and state changes with the record of each. Usage is the row the writing
// statements keep (usage.ts), read here, never counted.
import type { GatewayDb } from './clients';
import type { InstanceState } from './generated/gateway/client';
import { sqlOn, transaction, type Sql } from './sql';
import type { InstanceUsage } from './usage';

export interface InstanceOverview {
  id: string;
  address: string;
  state: InstanceState;
  stateReason: string | null;
  stateChangedAt: Date | null;
  /** While closing: when the grace period ends and the instance is erased. */
  closeAfter: Date | null;
  createdAt: Date;
  lastActiveAt: Date | null;
  ownerEmail: string | null;
  /** The instance's own quotas; null: the cluster's default. */
  quotaBytes: number | null;
  quotaRecordsBytes: number | null;
  usage: InstanceUsage;
}

export interface InstanceSearch {
  /** Part of the address or of the owner's e-mail, case-insensitive. */
  query?: string;
  state?: InstanceState;
  skip: number;
  take: number;
}

export interface StateChange {
  state: InstanceState;
  reason: string;
  /** Who asked: `operator` or `owner`. */
  actor: string;
  at: Date;
}

/** The outcome of a state change: the instance changed, no such instance, or one in another state. */
export type StateChangeResult = { changed: true; id: string; address: string } | { changed: false; state: InstanceState | null };

type OverviewRow = Omit<InstanceOverview, 'quotaBytes' | 'quotaRecordsBytes' | 'usage'> & {
  quotaBytes: string | null;
  quotaRecordsBytes: string | null;
  files: string;
  fileBytes: string;
  records: string;
  recordBytes: string;
};

/** $1 search pattern or null, $2 state or null. */
const MATCHES = `($1::text IS NULL OR i."address" ILIKE $1 ESCAPE '\\'
    OR EXISTS (SELECT 1 FROM "User" u WHERE u."instanceId" = i."id" AND u."kind" = 'owner' AND u."email" ILIKE $1 ESCAPE '\\'))
  AND ($2::text IS NULL OR i."state"::text = $2)`;

/** The overview of the instances `page` selects (a statement of "Instance" i rows, ordered). */
const overview = (page: string) => `WITH page AS (${page})
  SELECT p."id", p."address", p."state", p."stateReason", p."stateChangedAt", p."closeAfter", p."createdAt", p."lastActiveAt",
         p."quotaBytes"::text AS "quotaBytes", p."quotaRecordsBytes"::text AS "quotaRecordsBytes", o."email" AS "ownerEmail",
         coalesce(us."files", 0)::text AS "files", coalesce(us."fileBytes", 0)::text AS "fileBytes",
         coalesce(us."records", 0)::text AS "records", coalesce(us."recordBytes", 0)::text AS "recordBytes"
  FROM page p
  LEFT JOIN LATERAL (SELECT u."email" FROM "User" u WHERE u."instanceId" = p."id" AND u."kind" = 'owner' LIMIT 1) o ON true
  LEFT JOIN LATERAL (SELECT sum(s."files") AS "files", sum(s."fileBytes") AS "fileBytes", sum(s."records") AS "records",
    sum(s."recordBytes") AS "recordBytes" FROM "InstanceUsage" s WHERE s."instanceId" = p."id") us ON true
  ORDER BY p."createdAt" DESC, p."id"`;

/** Never the sealed private key. */
const COLUMNS = `i."id", i."address", i."state", i."stateReason", i."stateChangedAt", i."closeAfter", i."createdAt", i."lastActiveAt", i."quotaBytes", i."quotaRecordsBytes"`;
const PAGE = overview(`SELECT ${COLUMNS} FROM "Instance" i WHERE ${MATCHES} ORDER BY i."createdAt" DESC, i."id" OFFSET $3 LIMIT $4`);
const ONE = overview(`SELECT ${COLUMNS} FROM "Instance" i WHERE i."address" = $1`);

// An instance whose grace period has ended belongs to the purge: no change applies to it any more.
const STATE_CHANGE = `UPDATE "Instance" SET "state" = $2::"InstanceState", "stateReason" = $3, "stateChangedAt" = $4::timestamptz,
    "closeAfter" = $6::timestamptz
  WHERE "address" = $1 AND "state"::text = ANY($5::text[]) AND ("closeAfter" IS NULL OR "closeAfter" > $4::timestamptz)
  RETURNING "id", "address"`;
const RECORD_CHANGE = `INSERT INTO "InstanceStateChange" ("instanceId", "state", "reason", "actor", "at")
  VALUES ($1::uuid, $2::"InstanceState", $3, $4, $5::timestamptz)`;

/** `50%_off` matches itself only: ILIKE's wildcards in the operator's text are escaped. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const count = (value: string | null) => (value === null ? null : Number(value));

function toOverview({ quotaBytes, quotaRecordsBytes, files, fileBytes, records, recordBytes, ...row }: OverviewRow): InstanceOverview {
  return {
    ...row,
    quotaBytes: count(quotaBytes),
    quotaRecordsBytes: count(quotaRecordsBytes),
    usage: { files: Number(files), fileBytes: Number(fileBytes), records: Number(records), recordBytes: Number(recordBytes) },
  };
}

export class InstanceAdminRepository {
  private readonly sql: Sql;

  constructor(private readonly db: GatewayDb) {
    this.sql = sqlOn(db.pool);
  }

  /** A page of the instances that match, newest first, and how many match in all. */
  async list(search: InstanceSearch): Promise<{ total: number; instances: InstanceOverview[] }> {
    const filter = [search.query ? containing(search.query) : null, search.state ?? null];
    const [rows, [total]] = await Promise.all([
      this.sql.prepared<OverviewRow>(PAGE, [...filter, search.skip, search.take]),
      this.sql.prepared<{ total: string }>(`SELECT count(*)::text AS "total" FROM "Instance" i WHERE ${MATCHES}`, filter),
    ]);
    return { total: Number(total?.total ?? 0), instances: rows.map(toOverview) };
  }

  async find(address: string): Promise<InstanceOverview | null> {
    const [row] = await this.sql.prepared<OverviewRow>(ONE, [address]);
    return row ? toOverview(row) : null;
  }

  /** The instance's state changes, newest first. */
  history(instanceId: string): Promise<StateChange[]> {
    return this.sql.prepared<StateChange>(
      `SELECT "state", "reason", "actor", "at" FROM "InstanceStateChange" WHERE "instanceId" = $1::uuid ORDER BY "id" DESC`,
      [instanceId],
    );
  }

  /** Sets the quotas given (null: back to the cluster default); false when there is no such instance. */
  async setQuota(address: string, quota: { quotaBytes?: number | null; quotaRecordsBytes?: number | null }): Promise<boolean> {
    // Each column is written only when given ($3/$5 say whether), so one statement serves every combination.
    const changed = await this.sql.count(
      `UPDATE "Instance" SET
         "quotaBytes" = CASE WHEN $3 THEN $2::bigint ELSE "quotaBytes" END,
         "quotaRecordsBytes" = CASE WHEN $5 THEN $4::bigint ELSE "quotaRecordsBytes" END
       WHERE "address" = $1`,
      [
        address,
        quota.quotaBytes ?? null,
        quota.quotaBytes !== undefined,
        quota.quotaRecordsBytes ?? null,
        quota.quotaRecordsBytes !== undefined,
      ],
    );
    return changed > 0;
  }

  /**
   * Moves the instance from one of `from` to `change.state`, and records the change in the same
   * transaction. Not changed: the instance is missing (state null), in another state, or past the end
   * of its grace period. `closeAfter`: when a closing instance is erased (none for the other states).
   */
  async changeState(
    address: string,
    from: InstanceState[],
    change: StateChange,
    closeAfter: Date | null = null,
  ): Promise<StateChangeResult> {
    return transaction(this.db.pool, async (tx) => {
      const [row] = await tx.prepared<{ id: string; address: string }>(STATE_CHANGE, [
        address,
        change.state,
        change.reason,
        change.at,
        from,
        closeAfter,
      ]);
      if (!row) {
        const [current] = await tx.prepared<{ state: InstanceState }>(`SELECT "state" FROM "Instance" WHERE "address" = $1`, [address]);
        return { changed: false, state: current?.state ?? null };
      }
      await tx.prepared(RECORD_CHANGE, [row.id, change.state, change.reason, change.actor, change.at]);
      return { changed: true, ...row };
    });
  }

  /** Instances by state, the cluster's totals (Prometheus). */
  async countByState(): Promise<Record<InstanceState, number>> {
    const rows = await this.sql.prepared<{ state: InstanceState; n: string }>(
      `SELECT "state", count(*)::text AS "n" FROM "Instance" GROUP BY "state"`,
      [],
    );
    const totals: Record<InstanceState, number> = { active: 0, suspended: 0, closing: 0 };
    for (const { state, n } of rows) totals[state] = Number(n);
    return totals;
  }
}
