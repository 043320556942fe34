// The operator's view of the instances (the admin API): listing and search with usage and quotas, the
// quotas themselves, and state changes with the record of each. Usage is the row the writing
// statements keep (usage.ts), read here, never counted.
import type { GatewayDb } from './clients';
import type { DexState, InstanceState, UserKind } from './generated/gateway/client';
import { containing, pageClause, sqlOn, transaction, type Sql } from './sql';
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
  /** Where its registration with dex stands. */
  dexState: DexState;
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
  /** Newest first by default. */
  sort?: InstanceSort;
  order?: 'asc' | 'desc';
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

export interface InstanceApp {
  appId: string;
  title: string | null;
  version: number;
  setup: boolean;
  enabled: boolean;
}

export interface RecentEvent {
  type: string;
  actorKind: string;
  at: Date;
}

export interface PortabilityState {
  kind: 'export' | 'import';
  status: string;
  createdAt: Date;
  finishedAt: Date | null;
  expiresAt: Date | null;
}

/** The outcome of a state change: the instance changed, no such instance, or one in another state. */
export type StateChangeResult = { changed: true; id: string; address: string } | { changed: false; state: InstanceState | null };

type InstanceRow = Omit<InstanceOverview, 'quotaBytes' | 'quotaRecordsBytes' | 'usage' | 'ownerEmail'> & {
  quotaBytes: string | null;
  quotaRecordsBytes: string | null;
  /** Only in the usage order. */
  usageBytes?: string;
};

/**
 * $1 search pattern or null, $2 state or null, $3 the instances whose owner's e-mail matches. The
 * reference table alone: what concerns the tenant tables is asked of them apart (OWNERS_MATCHING,
 * OWNER_EMAILS, USAGE_OF), each statement one table, so Citus runs none of them as a join across shards.
 */
const MATCHES = `($1::text IS NULL OR i."address" ILIKE $1 ESCAPE '\\' OR i."id" = ANY($3::uuid[]))
  AND ($2::text IS NULL OR i."state"::text = $2)`;

/** How the operator's list is ordered: newest, most used, most recently active, or by state (then newest). */
export type InstanceSort = 'created' | 'usage' | 'activity' | 'state';

/** Each sort's order over the page's columns. */
const ORDERS: Record<InstanceSort, Record<'asc' | 'desc', string>> = {
  created: { desc: `i."createdAt" DESC, i."id"`, asc: `i."createdAt", i."id"` },
  usage: { desc: `"usageBytes" DESC, i."createdAt" DESC, i."id"`, asc: `"usageBytes", i."createdAt" DESC, i."id"` },
  activity: { desc: `i."lastActiveAt" DESC NULLS LAST, i."id"`, asc: `i."lastActiveAt" NULLS FIRST, i."id"` },
  state: { desc: `i."state"::text DESC, i."createdAt" DESC, i."id"`, asc: `i."state"::text, i."createdAt" DESC, i."id"` },
};

/** Never the sealed private key. */
const COLUMNS = `i."id", i."address", i."state", i."stateReason", i."stateChangedAt", i."closeAfter", i."createdAt", i."lastActiveAt",
  i."dexState", i."quotaBytes"::text AS "quotaBytes", i."quotaRecordsBytes"::text AS "quotaRecordsBytes"`;
/**
 * Each instance's bytes (files and records), summed on the shards where its rows live and joined to the
 * reference table on "instanceId": across instances on purpose, and only for the usage order.
 */
const USAGE_JOIN = `LEFT JOIN (SELECT s."instanceId", sum(s."fileBytes" + s."recordBytes") AS "bytes" FROM "InstanceUsage" s GROUP BY s."instanceId") ub
    ON ub."instanceId" = i."id"`;
const pageOf = (sort: InstanceSort, direction: 'asc' | 'desc') =>
  `SELECT ${COLUMNS}${sort === 'usage' ? `, coalesce(ub."bytes", 0) AS "usageBytes"` : ''} FROM "Instance" i ${sort === 'usage' ? USAGE_JOIN : ''}
   WHERE ${MATCHES} ORDER BY ${ORDERS[sort][direction]}`;
const PAGES = Object.fromEntries(
  (Object.keys(ORDERS) as InstanceSort[]).flatMap((sort) => (['asc', 'desc'] as const).map((d) => [`${sort} ${d}`, pageOf(sort, d)])),
) as Record<`${InstanceSort} ${'asc' | 'desc'}`, string>;
const TOTAL = `SELECT count(*)::text AS "total" FROM "Instance" i WHERE ${MATCHES}`;
const ONE = `SELECT ${COLUMNS} FROM "Instance" i WHERE i."address" = $1`;
/** Across instances, on purpose: the operator searches them all (each shard's part of "User" joined with the reference table). */
const OWNERS_MATCHING = `SELECT u."instanceId" FROM "User" u JOIN "Instance" i ON i."id" = u."instanceId"
  WHERE u."kind" = 'owner' AND u."email" ILIKE $1 ESCAPE '\\'`;
const OWNER_EMAILS = `SELECT u."instanceId", u."email" FROM "User" u WHERE u."instanceId" = ANY($1::uuid[]) AND u."kind" = 'owner'`;
const USAGE_OF = `SELECT s."instanceId", sum(s."files")::text AS "files", sum(s."fileBytes")::text AS "fileBytes",
    sum(s."records")::text AS "records", sum(s."recordBytes")::text AS "recordBytes"
  FROM "InstanceUsage" s WHERE s."instanceId" = ANY($1::uuid[]) GROUP BY s."instanceId"`;

// An instance whose grace period has ended belongs to the purge: no change applies to it any more.
const STATE_CHANGE = `UPDATE "Instance" SET "state" = $2::"InstanceState", "stateReason" = $3, "stateChangedAt" = $4::timestamptz,
    "closeAfter" = $6::timestamptz
  WHERE "address" = $1 AND "state" = ANY($5::"InstanceState"[]) AND ("closeAfter" IS NULL OR "closeAfter" > $4::timestamptz)
  RETURNING "id", "address"`;
const VOID_ALLOWANCES = `UPDATE "InstanceUsage" SET "recordAllowance" = 0, "allowanceDefault" = NULL WHERE "instanceId" = $1::uuid`;
const RECORD_CHANGE = `INSERT INTO "InstanceStateChange" ("instanceId", "state", "reason", "actor", "at")
  VALUES ($1::uuid, $2::"InstanceState", $3, $4, $5::timestamptz)`;

const count = (value: string | null) => (value === null ? null : Number(value));

export class InstanceAdminRepository {
  private readonly sql: Sql;

  constructor(private readonly db: GatewayDb) {
    this.sql = sqlOn(db.pool);
  }

  /** A page of the instances that match, newest first, and how many match in all. */
  async list(search: InstanceSearch): Promise<{ total: number; instances: InstanceOverview[] }> {
    const pattern = search.query ? containing(search.query) : null;
    const owners = pattern
      ? (await this.sql.prepared<{ instanceId: string }>(OWNERS_MATCHING, [pattern])).map((row) => row.instanceId)
      : [];
    const filter = [pattern, search.state ?? null, owners];
    const values: unknown[] = [...filter];
    const [rows, [total]] = await Promise.all([
      this.sql.prepared<InstanceRow>(
        `${PAGES[`${search.sort ?? 'created'} ${search.order ?? 'desc'}`]} ${pageClause(values, search)}`,
        values,
      ),
      this.sql.prepared<{ total: string }>(TOTAL, filter),
    ]);
    return { total: Number(total?.total ?? 0), instances: await this.overviews(rows) };
  }

  async find(address: string): Promise<InstanceOverview | null> {
    const [overview] = await this.overviews(await this.sql.prepared<InstanceRow>(ONE, [address]));
    return overview ?? null;
  }

  /** The instances with their owners' e-mail and their usage, in the order given. */
  private async overviews(rows: InstanceRow[]): Promise<InstanceOverview[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((row) => row.id);
    type Usage = { instanceId: string; files: string; fileBytes: string; records: string; recordBytes: string };
    const [emails, usage] = await Promise.all([
      this.sql.prepared<{ instanceId: string; email: string | null }>(OWNER_EMAILS, [ids]),
      this.sql.prepared<Usage>(USAGE_OF, [ids]),
    ]);
    const emailOf = new Map(emails.map((row) => [row.instanceId, row.email]));
    const usageOf = new Map(usage.map((row) => [row.instanceId, row]));
    return rows.map(({ quotaBytes, quotaRecordsBytes, usageBytes: _usage, ...row }) => {
      const u = usageOf.get(row.id);
      return {
        ...row,
        ownerEmail: emailOf.get(row.id) ?? null,
        quotaBytes: count(quotaBytes),
        quotaRecordsBytes: count(quotaRecordsBytes),
        usage: {
          files: Number(u?.files ?? 0),
          fileBytes: Number(u?.fileBytes ?? 0),
          records: Number(u?.records ?? 0),
          recordBytes: Number(u?.recordBytes ?? 0),
        },
      };
    });
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
    return transaction(this.db.pool, async (tx) => {
      // Each column is written only when given ($3/$5 say whether), so one statement serves every combination.
      const [changed] = await tx.prepared<{ id: string }>(
        `UPDATE "Instance" SET
           "quotaBytes" = CASE WHEN $3 THEN $2::bigint ELSE "quotaBytes" END,
           "quotaRecordsBytes" = CASE WHEN $5 THEN $4::bigint ELSE "quotaRecordsBytes" END
         WHERE "address" = $1 RETURNING "id"`,
        [
          address,
          quota.quotaBytes ?? null,
          quota.quotaBytes !== undefined,
          quota.quotaRecordsBytes ?? null,
          quota.quotaRecordsBytes !== undefined,
        ],
      );
      // Allowances granted under the instance's former records quota are void (usage.ts): the next writes refill under this one.
      if (changed && quota.quotaRecordsBytes !== undefined) await tx.count(VOID_ALLOWANCES, [changed.id]);
      return changed !== undefined;
    });
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

  /** Its accounts by kind (owner, users, applications). */
  async accounts(instanceId: string): Promise<Record<UserKind, number>> {
    const rows = await this.sql.prepared<{ kind: UserKind; n: string }>(
      `SELECT "kind", count(*)::text AS "n" FROM "User" WHERE "instanceId" = $1::uuid GROUP BY "kind"`,
      [instanceId],
    );
    const totals: Record<UserKind, number> = { owner: 0, user: 0, application: 0 };
    for (const { kind, n } of rows) totals[kind] = Number(n);
    return totals;
  }

  /** The apps dex pushed to it, with the version and whether the owner set each up. */
  apps(instanceId: string): Promise<InstanceApp[]> {
    return this.sql.prepared<InstanceApp>(
      `SELECT "appId", "record"->>'title' AS "title", "version", "setup", "enabled" FROM "Application"
       WHERE "instanceId" = $1::uuid ORDER BY "appId"`,
      [instanceId],
    );
  }

  /** Its latest changes: what kind, by what kind of account, when; never what they touched. */
  async recentEvents(instanceId: string, take: number): Promise<RecentEvent[]> {
    const rows = await this.sql.prepared<RecentEvent>(
      `SELECT "type", "actorKind", "at" FROM "Event" WHERE "instanceId" = $1::uuid ORDER BY "id" DESC LIMIT $2`,
      [instanceId, take],
    );
    return rows;
  }

  /** Its latest exports and imports, newest first. */
  portability(instanceId: string): Promise<PortabilityState[]> {
    return this.sql.prepared<PortabilityState>(
      `SELECT "kind", "status", "createdAt", "finishedAt", "expiresAt" FROM "PortabilityJob"
       WHERE "instanceId" = $1::uuid ORDER BY "createdAt" DESC, "id" LIMIT 5`,
      [instanceId],
    );
  }

  /** Instances by dex registration state, and the newest of those not registered. */
  async dexRegistration(
    take: number,
  ): Promise<{ counts: Record<DexState, number>; waiting: { address: string; dexState: DexState; createdAt: Date }[] }> {
    const [rows, waiting] = await Promise.all([
      this.sql.prepared<{ dexState: DexState; n: string }>(
        `SELECT "dexState", count(*)::text AS "n" FROM "Instance" GROUP BY "dexState"`,
        [],
      ),
      this.sql.prepared<{ address: string; dexState: DexState; createdAt: Date }>(
        `SELECT "address", "dexState", "createdAt" FROM "Instance" WHERE "dexState" <> 'registered' ORDER BY "createdAt" DESC LIMIT $1`,
        [take],
      ),
    ]);
    const counts: Record<DexState, number> = { pending: 0, registered: 0, failed: 0 };
    for (const { dexState, n } of rows) counts[dexState] = Number(n);
    return { counts, waiting };
  }

  /** The gateway database's size on disk, in bytes. */
  async databaseBytes(): Promise<number> {
    const [row] = await this.sql.prepared<{ bytes: string }>(`SELECT pg_database_size(current_database())::text AS "bytes"`, []);
    return Number(row?.bytes ?? 0);
  }

  /** Webhooks by delivery state (ok, retrying, failed), the cluster's totals (Prometheus). */
  async webhooksByState(): Promise<Record<string, number>> {
    const rows = await this.sql.prepared<{ state: string; n: string }>(
      `SELECT "state", count(*)::text AS "n" FROM "Webhook" GROUP BY "state"`,
      [],
    );
    const totals: Record<string, number> = { ok: 0, retrying: 0, failed: 0 };
    for (const { state, n } of rows) totals[state] = Number(n);
    return totals;
  }

  /**
   * How many instances use at least `share` of a quota (files, records): the quota pressure the alerts
   * watch. Each instance's usage is summed where its rows live, then compared with its own or the default quota.
   */
  async nearQuota(share: number, defaults: { bytes: number; recordsBytes: number }): Promise<{ files: number; records: number }> {
    const [row] = await this.sql.prepared<{ files: string; records: string }>(
      `SELECT count(*) FILTER (WHERE u."fileBytes" >= $1::float8 * coalesce(i."quotaBytes", $2::int8))::text AS "files",
              count(*) FILTER (WHERE u."recordBytes" >= $1::float8 * coalesce(i."quotaRecordsBytes", $3::int8))::text AS "records"
       FROM "Instance" i
       JOIN (SELECT s."instanceId", sum(s."fileBytes") AS "fileBytes", sum(s."recordBytes") AS "recordBytes" FROM "InstanceUsage" s GROUP BY s."instanceId") u
         ON u."instanceId" = i."id"`,
      [share, defaults.bytes, defaults.recordsBytes],
    );
    return { files: Number(row?.files ?? 0), records: Number(row?.records ?? 0) };
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
