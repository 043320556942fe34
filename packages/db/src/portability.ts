// Exports and imports of a whole instance: the PortabilityJob rows a client reads, the pages an export
// reads the instance in (bounded memory whatever its size), and the restore of an archive into an empty
// instance in ONE transaction (all or nothing), serialised per instance by an advisory lock.
import { randomUUID } from 'node:crypto';
import type { GatewayDb } from './clients';
import type { ShareLinkRecord } from './links';
import type { ActorKind } from './outbox';
import { ReadRouting } from './replica';
import { postgresErrorCode, sqlOn, transaction, UNIQUE_VIOLATION, type Sql } from './sql';
import { eventsIn } from './events';
import { recountUsage } from './usage';

export type PortabilityKind = 'export' | 'import';
export type PortabilityStatus = 'uploading' | 'running' | 'ready' | 'done' | 'failed';

export interface PortabilityJobRow {
  instanceId: string;
  id: string;
  kind: PortabilityKind;
  status: PortabilityStatus;
  /** int8 as pg hands it over. */
  bytes: string;
  files: number;
  records: number;
  progress: number;
  result: Record<string, unknown> | null;
  createdAt: Date;
  finishedAt: Date | null;
  expiresAt: Date | null;
}

export interface JobProgress {
  bytes?: number;
  files: number;
  records: number;
  progress: number;
}

/** Columns only (RETURNING computes nothing, for Citus); pg hands "bytes" (int8) over as a string. */
const JOB_COLUMNS = `"instanceId", "id", "kind", "status", "bytes", "files", "records", "progress", "result", "createdAt", "finishedAt", "expiresAt"`;

/** Rows of the export's reads, as the database holds them (ids, not usernames: the gateway maps them). */
export interface UserExportRow {
  id: string;
  username: string;
  email: string | null;
  fullName: string | null;
  kind: 'owner' | 'user' | 'application';
  disabled: boolean;
  createdAt: Date;
  grants: { namespace: string; endpoint: string; access: 'read' | 'write' }[] | null;
}
export interface AppExportRow {
  appId: string;
  record: Record<string, unknown>;
  version: number;
  setup: boolean;
  enabled: boolean;
  setupVersion: number | null;
  userId: string | null;
}
export interface BundleExportRow {
  name: string;
  query: Record<string, unknown>;
  createdAt: Date;
}
export interface CombinatorExportRow {
  name: string;
  query: Record<string, unknown>[];
  createdAt: Date;
}
export interface DebitExportRow {
  key: string;
  requestClientName: string;
  requestClientUrl: string;
  requestClientLogoUrl: string;
  requestApplicationId: string | null;
  requestDescription: string | null;
  holderId: string | null;
  createdAt: Date;
  permissions: {
    createdAt: string;
    purpose: string;
    start: string;
    period: number;
    cancelAtPeriodEnd: boolean;
    termsUrl: string;
    bundleName: string;
    accepted: boolean;
    canceledAt: string | null;
  }[];
}
export interface FileExportRow {
  fileId: string;
  name: string;
  source: string;
  tags: string[];
  title: string | null;
  description: string | null;
  status: 'New' | 'Completed' | 'Deleted';
  size: string | null;
  contentPublic: boolean;
  uploaderId: string;
  dateCreated: Date;
  lastUpdated: Date;
  permissions: { userId: string; contentReadable: boolean }[];
}
export interface RecordExportRow {
  namespace: string;
  endpoint: string;
  recordId: string;
  data: unknown;
  createdAt: Date;
  userId: string | null;
  seq: string;
  links: string[];
}

/** One entry of the activity log as an export reads it; `key` (an event's seq or a read's id) orders its kind. */
export interface ActivityExportRow {
  key: string;
  type: string;
  actorKind: ActorKind;
  actorId: string | null;
  object: Record<string, unknown>;
  address: string | null;
  at: Date;
  times: number;
}

/** A share link as an export reads it (links.ts's record, the same columns). */
export type LinkExportRow = ShareLinkRecord;
/** The id before every link's, where `linksPage` starts. */
export const NO_LINK_BEFORE = '00000000-0000-0000-0000-000000000000';

export type JobOutcome = { status: 'ready' | 'done' | 'failed'; at: Date; expiresAt?: Date; result?: unknown } & Partial<JobProgress>;

async function finishOn(sql: Sql, instanceId: string, id: string, outcome: JobOutcome): Promise<boolean> {
  const changed = await sql.count(
    `UPDATE "PortabilityJob" SET "status" = $3, "finishedAt" = $4::timestamptz, "expiresAt" = $5::timestamptz, "result" = $6::jsonb,
      "bytes" = COALESCE($7, "bytes"), "files" = COALESCE($8, "files"), "records" = COALESCE($9, "records"),
      "progress" = CASE WHEN $3 = 'failed' THEN "progress" ELSE 1 END
    WHERE "instanceId" = $1::uuid AND "id" = $2::uuid AND "status" = 'running'`,
    [
      instanceId,
      id,
      outcome.status,
      outcome.at,
      outcome.expiresAt ?? null,
      outcome.result === undefined ? null : JSON.stringify(outcome.result),
      outcome.bytes ?? null,
      outcome.files ?? null,
      outcome.records ?? null,
    ],
  );
  return changed > 0;
}

/** Where a page of records ends: the next page starts after it. */
export type RecordCursor = { namespace: string; endpoint: string; seq: string };

export class PortabilityRepository {
  private readonly sql: Sql;

  /** `reads` sends the export's reads to a replica when there is one (see ReadRouting). */
  constructor(
    private readonly db: GatewayDb,
    private readonly reads = new ReadRouting(db),
  ) {
    this.sql = sqlOn(db.pool);
  }

  /** Statements for an export's read of this instance, which may be served by the replica. */
  private async exported(instanceId: string): Promise<Sql> {
    return sqlOn(await this.reads.pool(instanceId));
  }

  // The job rows.

  /** A new running export; null when one is running already (the partial unique index). */
  async startExport(instanceId: string, now: Date): Promise<PortabilityJobRow | null> {
    // Marked as a write: the export's first reads (within the replica window) see every write before it,
    // accounts, apps and bundles included, whose own writes are not marked.
    return this.reads.written(instanceId, this.insertJob(instanceId, 'export', 'running', now));
  }

  /** A new import waiting for its bytes. */
  async createImport(instanceId: string, now: Date): Promise<PortabilityJobRow> {
    const row = await this.insertJob(instanceId, 'import', 'uploading', now);
    if (!row) throw new Error('an uploading import cannot conflict');
    return row;
  }

  private async insertJob(
    instanceId: string,
    kind: PortabilityKind,
    status: PortabilityStatus,
    now: Date,
  ): Promise<PortabilityJobRow | null> {
    try {
      const [row] = await this.sql.prepared<PortabilityJobRow>(
        `INSERT INTO "PortabilityJob" ("instanceId", "id", "kind", "status", "createdAt")
        VALUES ($1::uuid, $2::uuid, $3, $4, $5::timestamptz) RETURNING ${JOB_COLUMNS}`,
        [instanceId, randomUUID(), kind, status, now],
      );
      return row ?? null;
    } catch (error) {
      if (postgresErrorCode(error) === UNIQUE_VIOLATION) return null;
      throw error;
    }
  }

  /** uploading → running, with the uploaded size: 'conflict' when another import of the instance runs. */
  async startImport(instanceId: string, id: string, bytes: number): Promise<PortabilityJobRow | 'conflict' | null> {
    try {
      const [row] = await this.sql.prepared<PortabilityJobRow>(
        `UPDATE "PortabilityJob" SET "status" = 'running', "bytes" = $3
        WHERE "instanceId" = $1::uuid AND "id" = $2::uuid AND "kind" = 'import' AND "status" = 'uploading'
        RETURNING ${JOB_COLUMNS}`,
        [instanceId, id, bytes],
      );
      return row ?? null;
    } catch (error) {
      if (postgresErrorCode(error) === UNIQUE_VIOLATION) return 'conflict';
      throw error;
    }
  }

  async find(instanceId: string, id: string, kind: PortabilityKind): Promise<PortabilityJobRow | null> {
    const [row] = await this.sql.prepared<PortabilityJobRow>(
      `SELECT ${JOB_COLUMNS} FROM "PortabilityJob" WHERE "instanceId" = $1::uuid AND "id" = $2::uuid AND "kind" = $3`,
      [instanceId, id, kind],
    );
    return row ?? null;
  }

  /** Newest first. */
  list(instanceId: string, kind: PortabilityKind): Promise<PortabilityJobRow[]> {
    return this.sql.prepared<PortabilityJobRow>(
      `SELECT ${JOB_COLUMNS} FROM "PortabilityJob" WHERE "instanceId" = $1::uuid AND "kind" = $2 ORDER BY "createdAt" DESC, "id" LIMIT 100`,
      [instanceId, kind],
    );
  }

  /** Moves a running job's counters; false when it is running no more. */
  async progress(instanceId: string, id: string, progress: JobProgress): Promise<boolean> {
    return (
      (await this.sql.count(
        `UPDATE "PortabilityJob" SET "bytes" = COALESCE($3, "bytes"), "files" = $4, "records" = $5, "progress" = $6
        WHERE "instanceId" = $1::uuid AND "id" = $2::uuid AND "status" = 'running'`,
        [instanceId, id, progress.bytes ?? null, progress.files, progress.records, progress.progress],
      )) > 0
    );
  }

  /** running → ready/done/failed with the final counters; false when it was not running (finished by another attempt). */
  finish(instanceId: string, id: string, outcome: JobOutcome): Promise<boolean> {
    return finishOn(this.sql, instanceId, id, outcome);
  }

  /** Ready exports past their expiry and failed or abandoned jobs older than `staleBefore`, with their instance address. */
  expired(now: Date, staleBefore: Date, limit: number): Promise<(PortabilityJobRow & { address: string })[]> {
    return this.sql.prepared(
      `SELECT j."instanceId", j."id", j."kind", j."status", j."bytes", j."files", j."records", j."progress",
        j."result", j."createdAt", j."finishedAt", j."expiresAt", i."address"
      FROM "PortabilityJob" j JOIN "Instance" i ON i."id" = j."instanceId"
      WHERE (j."status" = 'ready' AND j."expiresAt" < $1::timestamptz)
        OR (j."status" IN ('failed', 'done', 'uploading') AND j."createdAt" < $2::timestamptz)
      LIMIT $3`,
      [now, staleBefore, limit],
    );
  }

  async remove(instanceId: string, id: string): Promise<void> {
    await this.sql.count(`DELETE FROM "PortabilityJob" WHERE "instanceId" = $1::uuid AND "id" = $2::uuid`, [instanceId, id]);
  }

  /** Whether the instance holds no file (in any state) and no record: what an import may go into. */
  async isEmpty(instanceId: string, sql: Sql = this.sql): Promise<boolean> {
    const [row] = await sql.prepared<{ taken: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM "File" WHERE "instanceId" = $1::uuid)
        OR EXISTS (SELECT 1 FROM "DataRecord" WHERE "instanceId" = $1::uuid) AS "taken"`,
      [instanceId],
    );
    return !row?.taken;
  }

  // The export's reads. Small tables whole; files and records a page at a time, in key order.

  async counts(instanceId: string): Promise<{ files: number; records: number }> {
    return (await this.exported(instanceId))
      .prepared<{ files: number; records: number }>(
        `SELECT (SELECT count(*)::int FROM "File" WHERE "instanceId" = $1::uuid AND "status" <> 'New') AS "files",
          (SELECT count(*)::int FROM "DataRecord" WHERE "instanceId" = $1::uuid) AS "records"`,
        [instanceId],
      )
      .then(([row]) => row ?? { files: 0, records: 0 });
  }

  async users(instanceId: string): Promise<UserExportRow[]> {
    return (await this.exported(instanceId)).prepared<UserExportRow>(
      `SELECT u."id", u."username", u."email", u."fullName", u."kind", u."disabled", u."createdAt",
        (SELECT json_agg(json_build_object('namespace', g."namespace", 'endpoint', g."endpoint", 'access', g."access")
           ORDER BY g."namespace", g."endpoint", g."access")
         FROM "DataGrant" g WHERE g."instanceId" = $1::uuid AND g."userId" = u."id") AS "grants"
      FROM "User" u WHERE u."instanceId" = $1::uuid ORDER BY (u."kind" <> 'owner'), u."createdAt", u."username"`,
      [instanceId],
    );
  }

  async apps(instanceId: string): Promise<AppExportRow[]> {
    return (await this.exported(instanceId)).prepared<AppExportRow>(
      `SELECT "appId", "record", "version", "setup", "enabled", "setupVersion", "userId" FROM "Application"
      WHERE "instanceId" = $1::uuid ORDER BY "appId"`,
      [instanceId],
    );
  }

  async bundles(instanceId: string): Promise<BundleExportRow[]> {
    return (await this.exported(instanceId)).prepared<BundleExportRow>(
      `SELECT "name", "query", "createdAt" FROM "DataBundle" WHERE "instanceId" = $1::uuid ORDER BY "name"`,
      [instanceId],
    );
  }

  async combinators(instanceId: string): Promise<CombinatorExportRow[]> {
    return (await this.exported(instanceId)).prepared<CombinatorExportRow>(
      `SELECT "name", "query", "createdAt" FROM "DataCombinator" WHERE "instanceId" = $1::uuid ORDER BY "name"`,
      [instanceId],
    );
  }

  async debits(instanceId: string): Promise<DebitExportRow[]> {
    return (await this.exported(instanceId)).prepared<DebitExportRow>(
      `SELECT d."key", d."requestClientName", d."requestClientUrl", d."requestClientLogoUrl", d."requestApplicationId",
        d."requestDescription", d."holderId", d."createdAt",
        COALESCE((SELECT json_agg(json_build_object('createdAt', p."createdAt", 'purpose', p."purpose", 'start', p."start",
            'period', p."period", 'cancelAtPeriodEnd', p."cancelAtPeriodEnd", 'termsUrl', p."termsUrl", 'bundleName', p."bundleName",
            'accepted', p."accepted", 'canceledAt', p."canceledAt") ORDER BY p."id")
          FROM "DataDebitPermission" p WHERE p."instanceId" = $1::uuid AND p."debitKey" = d."key"), '[]') AS "permissions"
      FROM "DataDebit" d WHERE d."instanceId" = $1::uuid ORDER BY d."key"`,
      [instanceId],
    );
  }

  /** Files other than unfinished uploads (a New file has no bytes yet), after `after` in fileId order. */
  async filesPage(instanceId: string, after: string, limit: number): Promise<FileExportRow[]> {
    return (await this.exported(instanceId)).prepared<FileExportRow>(
      `SELECT f."fileId", f."name", f."source", f."tags", f."title", f."description", f."status", f."size"::text AS "size",
        f."contentPublic", f."uploaderId", f."dateCreated", f."lastUpdated",
        COALESCE((SELECT json_agg(json_build_object('userId', p."userId", 'contentReadable', p."contentReadable") ORDER BY p."userId")
          FROM "FilePermission" p WHERE p."instanceId" = $1::uuid AND p."fileId" = f."fileId"), '[]') AS "permissions"
      FROM "File" f WHERE f."instanceId" = $1::uuid AND f."status" <> 'New' AND f."fileId" > $2
      ORDER BY f."fileId" LIMIT $3`,
      [instanceId, after, limit],
    );
  }

  /** Records in (namespace, endpoint, seq) order after `after`, each with the recordIds it is linked with. */
  async recordsPage(instanceId: string, after: RecordCursor | null, limit: number): Promise<RecordExportRow[]> {
    const cursor = after ?? { namespace: '', endpoint: '', seq: '-1' };
    return (await this.exported(instanceId)).prepared<RecordExportRow>(
      `SELECT r."namespace", r."endpoint", r."recordId", r."data", r."createdAt", r."userId", r."seq"::text AS "seq",
        COALESCE((SELECT array_agg(l."linkedId"::text ORDER BY l."linkedId") FROM "DataRecordLink" l
          WHERE l."instanceId" = $1::uuid AND l."recordId" = r."recordId"), '{}') AS "links"
      FROM "DataRecord" r WHERE r."instanceId" = $1::uuid AND (r."namespace", r."endpoint", r."seq") > ($2, $3, $4::bigint)
      ORDER BY r."namespace", r."endpoint", r."seq" LIMIT $5`,
      [instanceId, cursor.namespace, cursor.endpoint, cursor.seq, limit],
    );
  }

  /**
   * The activity log in key order after `after` (a key of the same kind, '-1' before the first): the
   * changes of the outbox and the reads kept, each by id (the order they were written in). Keyset pages, so an export holds one page at a time.
   */
  /** A page of `limit` rows after the key `after`: each change of a row that holds several (events.ts) an entry of its own. */
  async activityPage(instanceId: string, kind: 'change' | 'read', after: string, limit: number): Promise<ActivityExportRow[]> {
    const [table, times, count] = kind === 'change' ? ['"Event"', '1', '"count"'] : ['"ReadActivity"', '"times"', '1'];
    const rows = await (
      await this.exported(instanceId)
    ).prepared<ActivityExportRow & { count: number }>(
      `SELECT "id"::text AS "key", "type", "actorKind", "actorId", "object", "address", "at", ${times} AS "times", ${count} AS "count"
      FROM ${table} WHERE "instanceId" = $1::uuid AND "id" > $2::bigint ORDER BY "id" LIMIT $3`,
      [instanceId, after, limit],
    );
    return rows.flatMap(eventsIn);
  }

  /** The share links after the link `after` (NO_LINK_BEFORE before the first), by id: never their token hash or password hash. */
  async linksPage(instanceId: string, after: string, limit: number): Promise<LinkExportRow[]> {
    return (await this.exported(instanceId)).prepared<LinkExportRow>(
      `SELECT l."id", l."passwordHash" IS NOT NULL AS "hasPassword", l."expiresAt", l."downloadLimit", l."downloads", l."views",
        l."lastUsedAt", l."allowDownload", l."createdAt", l."revokedAt",
        ARRAY(SELECT lf."fileId" FROM "ShareLinkFile" lf WHERE lf."instanceId" = $1::uuid AND lf."linkId" = l."id" ORDER BY lf."position") AS "fileIds"
      FROM "ShareLink" l WHERE l."instanceId" = $1::uuid AND l."id" > $2::uuid ORDER BY l."id" LIMIT $3`,
      [instanceId, after, limit],
    );
  }

  /**
   * Runs `work` in one transaction holding the instance's import lock (a transaction-level advisory
   * lock: released by COMMIT, ROLLBACK or a dead connection), once the instance is found empty; its
   * writes commit together or not at all. 'not-empty' when the instance holds a file or record.
   */
  restore<T>(instanceId: string, work: (restorer: Restorer) => Promise<T>): Promise<T | 'not-empty'> {
    return transaction(this.db.pool, async (tx) => {
      await tx.prepared(`SELECT pg_advisory_xact_lock(hashtextextended('pds-import:' || $1, 0))`, [instanceId]);
      if (!(await this.isEmpty(instanceId, tx))) return 'not-empty';
      const result = await work(new Restorer(tx, instanceId));
      // The usage of what was restored, in the same transaction (usage.ts).
      await recountUsage(tx, instanceId);
      return result;
    });
  }
}

/** The rows of one restore, written on its transaction. Ids are the archive's; account ids are made here. */
export class Restorer {
  constructor(
    private readonly tx: Sql,
    private readonly instanceId: string,
  ) {}

  /** Marks the import done in the same transaction as its rows: both commit, or neither. */
  finishJob(id: string, outcome: JobOutcome): Promise<boolean> {
    return finishOn(this.tx, this.instanceId, id, outcome);
  }

  /** The instance's owner (made at sign-up): the archive's owner becomes this account. */
  async owner(): Promise<{ id: string; username: string }> {
    const [row] = await this.tx.prepared<{ id: string; username: string }>(
      `SELECT "id", "username" FROM "User" WHERE "instanceId" = $1::uuid AND "kind" = 'owner' ORDER BY "createdAt" LIMIT 1`,
      [this.instanceId],
    );
    if (!row) throw new Error('the instance has no owner');
    return row;
  }

  /** A disabled account without a password; null when the username is taken. */
  async user(user: {
    username: string;
    email?: string;
    fullName?: string;
    kind: 'user' | 'application';
    createdAt: string;
  }): Promise<string | null> {
    const id = randomUUID();
    const rows = await this.tx.prepared(
      `INSERT INTO "User" ("instanceId", "id", "username", "email", "fullName", "kind", "disabled", "createdAt")
      VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6::"UserKind", true, $7::timestamptz)
      ON CONFLICT ("instanceId", "username") DO NOTHING RETURNING "id"`,
      [this.instanceId, id, user.username, user.email ?? null, user.fullName ?? null, user.kind, user.createdAt],
    );
    return rows.length > 0 ? id : null;
  }

  async grants(userId: string, grants: { namespace: string; endpoint: string; access: 'read' | 'write' }[]): Promise<void> {
    if (grants.length === 0) return;
    await this.tx.prepared(
      `INSERT INTO "DataGrant" ("instanceId", "userId", "namespace", "endpoint", "access")
      SELECT $1::uuid, $2::uuid, g."namespace", g."endpoint", g."access"::"DataAccess"
      FROM unnest($3::text[], $4::text[], $5::text[]) AS g("namespace", "endpoint", "access") ON CONFLICT DO NOTHING`,
      [this.instanceId, userId, grants.map((g) => g.namespace), grants.map((g) => g.endpoint), grants.map((g) => g.access)],
    );
  }

  /** An app as pushed, neither set up nor enabled: the owner sets it up again on this cluster. */
  async app(app: { appId: string; record: unknown; version: number; userId: string | null }, receivedAt: Date): Promise<void> {
    await this.tx.prepared(
      `INSERT INTO "Application" ("instanceId", "appId", "record", "version", "receivedAt", "setup", "enabled", "userId")
      VALUES ($1::uuid, $2, $3::jsonb, $4, $5::timestamptz, false, false, $6::uuid)`,
      [this.instanceId, app.appId, JSON.stringify(app.record), app.version, receivedAt, app.userId],
    );
  }

  async bundle(bundle: { name: string; query: unknown; createdAt: string }): Promise<void> {
    await this.tx.prepared(
      `INSERT INTO "DataBundle" ("instanceId", "name", "query", "createdAt") VALUES ($1::uuid, $2, $3::jsonb, $4::timestamptz)`,
      [this.instanceId, bundle.name, JSON.stringify(bundle.query), bundle.createdAt],
    );
  }

  async combinator(combinator: { name: string; query: unknown; createdAt: string }): Promise<void> {
    await this.tx.prepared(
      `INSERT INTO "DataCombinator" ("instanceId", "name", "query", "createdAt") VALUES ($1::uuid, $2, $3::jsonb, $4::timestamptz)`,
      [this.instanceId, combinator.name, JSON.stringify(combinator.query), combinator.createdAt],
    );
  }

  /** A debit and its terms, every one unaccepted. */
  async debit(
    debit: Omit<DebitExportRow, 'createdAt' | 'permissions'> & { createdAt: string },
    permissions: Omit<DebitExportRow['permissions'][number], 'accepted'>[],
  ): Promise<void> {
    await this.tx.prepared(
      `INSERT INTO "DataDebit" ("instanceId", "key", "requestClientName", "requestClientUrl", "requestClientLogoUrl",
        "requestApplicationId", "requestDescription", "holderId", "createdAt")
      VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8::uuid, $9::timestamptz)`,
      [
        this.instanceId,
        debit.key,
        debit.requestClientName,
        debit.requestClientUrl,
        debit.requestClientLogoUrl,
        debit.requestApplicationId,
        debit.requestDescription,
        debit.holderId,
        debit.createdAt,
      ],
    );
    if (permissions.length === 0) return;
    await this.tx.prepared(
      `INSERT INTO "DataDebitPermission" ("instanceId", "debitKey", "createdAt", "purpose", "start", "period", "cancelAtPeriodEnd",
        "termsUrl", "bundleName", "accepted", "canceledAt")
      SELECT $1::uuid, $2, (p->>'createdAt')::timestamptz, p->>'purpose', (p->>'start')::timestamptz, (p->>'period')::int,
        (p->>'cancelAtPeriodEnd')::boolean, p->>'termsUrl', p->>'bundleName', false, (p->>'canceledAt')::timestamptz
      FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS t(p, n) ORDER BY t.n`,
      [this.instanceId, debit.key, JSON.stringify(permissions)],
    );
  }

  async file(
    file: Omit<FileExportRow, 'size' | 'dateCreated' | 'lastUpdated'> & { size: number | null; dateCreated: string; lastUpdated: string },
    now: Date,
  ): Promise<void> {
    await this.tx.prepared(
      `INSERT INTO "File" ("instanceId", "fileId", "name", "source", "tags", "title", "description", "status", "size", "contentPublic",
        "uploaderId", "dateCreated", "lastUpdated", "createdAt")
      VALUES ($1::uuid, $2, $3, $4, $5::text[], $6, $7, $8::"FileStatus", $9, $10, $11::uuid, $12::timestamptz, $13::timestamptz, $14::timestamptz)`,
      [
        this.instanceId,
        file.fileId,
        file.name,
        file.source,
        file.tags,
        file.title,
        file.description,
        file.status,
        file.size,
        file.contentPublic,
        file.uploaderId,
        file.dateCreated,
        file.lastUpdated,
        now,
      ],
    );
    if (file.permissions.length === 0) return;
    await this.tx.prepared(
      `INSERT INTO "FilePermission" ("instanceId", "fileId", "userId", "contentReadable")
      SELECT $1::uuid, $2, p."userId", p."readable" FROM unnest($3::uuid[], $4::boolean[]) AS p("userId", "readable")
      ON CONFLICT DO NOTHING`,
      [this.instanceId, file.fileId, file.permissions.map((p) => p.userId), file.permissions.map((p) => p.contentReadable)],
    );
  }

  /**
   * Makes the next generated fileId of each (base, ext) come after the restored ones: `last` is the
   * highest `-N` taken (0 for the plain id), so a later upload of the same name gets a new id.
   */
  async fileIdCounters(counters: { base: string; ext: string; last: number }[]): Promise<void> {
    if (counters.length === 0) return;
    await this.tx.prepared(
      `INSERT INTO "FileIdCounter" ("instanceId", "base", "ext", "last")
      SELECT $1::uuid, c."base", c."ext", max(c."last") FROM unnest($2::text[], $3::text[], $4::int[]) AS c("base", "ext", "last")
      GROUP BY c."base", c."ext"
      ON CONFLICT ("instanceId", "base", "ext") DO UPDATE SET "last" = GREATEST("FileIdCounter"."last", EXCLUDED."last")`,
      [this.instanceId, counters.map((c) => c.base), counters.map((c) => c.ext), counters.map((c) => c.last)],
    );
  }

  /** Records in archive order (their `seq` follows it). */
  async records(
    records: { namespace: string; endpoint: string; recordId: string; data: unknown; createdAt: string; userId: string | null }[],
  ): Promise<void> {
    if (records.length === 0) return;
    // Each record counts the bytes of its JSON text, as a record written through the API does (data.ts).
    const counted = records.map((record) => ({ ...record, bytes: Buffer.byteLength(JSON.stringify(record.data) ?? 'null') }));
    await this.tx.prepared(
      `INSERT INTO "DataRecord" ("instanceId", "recordId", "namespace", "endpoint", "data", "bytes", "createdAt", "userId")
      SELECT $1::uuid, (r->>'recordId')::uuid, r->>'namespace', r->>'endpoint', r->'data', (r->>'bytes')::int, (r->>'createdAt')::timestamptz,
        (r->>'userId')::uuid
      FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS t(r, n) ORDER BY t.n`,
      [this.instanceId, JSON.stringify(counted)],
    );
  }

  /** Links, each pair given once: stored in both directions. */
  async links(pairs: [string, string][]): Promise<void> {
    if (pairs.length === 0) return;
    await this.tx.prepared(
      `INSERT INTO "DataRecordLink" ("instanceId", "recordId", "linkedId")
      SELECT $1::uuid, p."a", p."b" FROM unnest($2::uuid[], $3::uuid[]) AS p("a", "b")
      UNION SELECT $1::uuid, p."b", p."a" FROM unnest($2::uuid[], $3::uuid[]) AS p("a", "b")
      ON CONFLICT DO NOTHING`,
      [this.instanceId, pairs.map((p) => p[0]), pairs.map((p) => p[1])],
    );
  }
}
