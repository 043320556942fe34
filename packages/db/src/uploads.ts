// Resumable (tus) uploads of files' bytes (apps/gateway/src/files/tus). Every method takes the instance
// id first; the sweep's reads (`ended`, `liveIds`) are the exceptions, across instances. Times are
// given by the caller (its clock), never read from the database: no statement calls now().
import type { GatewayDb } from './clients';
import { ReadRouting } from './replica';
import { sqlOn, statement, type Sql } from './sql';
import { UNLIMITED, type QuotaDefaults } from './usage';

export interface FileUploadRow {
  instanceId: string;
  id: string;
  fileId: string;
  length: number;
  offset: number;
  /** The store's state (ResumableState of @pds/storage), as JSON. */
  state: unknown;
  createdAt: Date;
  touchedAt: Date;
  lease: string | null;
  leaseUntil: Date | null;
}

/** An upload the sweep ends: expired, or of a file that is no longer New. */
export interface EndedUpload extends FileUploadRow {
  address: string;
}

export interface NewUpload {
  id: string;
  fileId: string;
  length: number;
  state: unknown;
  now: Date;
  /** Uploads last touched before this no longer hold their length (they expired). */
  liveAfter: Date;
}

/** Why an upload could not be created. */
export type CreateRefusal = 'quota' | 'file';

const COLUMNS = `u."instanceId", u."id", u."fileId", u."length"::text AS "length", u."offset"::text AS "offset", u."state",
  u."createdAt", u."touchedAt", u."lease", u."leaseUntil"`;
type Row = Omit<FileUploadRow, 'length' | 'offset'> & { length: string; offset: string };
const row = (r: Row): FileUploadRow => Object.assign(r, { length: Number(r.length), offset: Number(r.offset) });

const ENSURE_USAGE = `INSERT INTO "InstanceUsage" ("instanceId", "share") VALUES ($1::uuid, 0) ON CONFLICT ("instanceId", "share") DO NOTHING`;
/** The instance's file bytes, with the row locked: completions (which change it) and creations take turns. */
const LOCK_USAGE = `SELECT u."fileBytes"::text AS "fileBytes" FROM "InstanceUsage" u WHERE u."instanceId" = $1::uuid AND u."share" = 0 FOR UPDATE`;
/** What live uploads of the instance hold back ($2: touched after), and its own quota. */
const RESERVED = `SELECT coalesce(sum(u."length"), 0)::text AS "reserved" FROM "FileUpload" u
  WHERE u."instanceId" = $1::uuid AND u."touchedAt" > $2::timestamptz`;
const OWN_QUOTA = `SELECT i."quotaBytes"::text AS "quota" FROM "Instance" i WHERE i."id" = $1::uuid`;
/** The file may take an upload: still New; locked against a concurrent delete until the row is in. */
const LOCK_NEW_FILE = `SELECT 1 FROM "File" f WHERE f."instanceId" = $1::uuid AND f."fileId" = $2 AND f."status" = 'New' FOR SHARE`;
const INSERT = `INSERT INTO "FileUpload" ("instanceId", "id", "fileId", "length", "state", "createdAt", "touchedAt")
  VALUES ($1::uuid, $2, $3, $4, $5::jsonb, $6::timestamptz, $6::timestamptz)`;

const FIND = `SELECT ${COLUMNS} FROM "FileUpload" u WHERE u."instanceId" = $1::uuid AND u."id" = $2`;
/** $3 lease, $4 now, $5 lease until: taken when nobody holds it (or its holder let it lapse). */
const CLAIM = `UPDATE "FileUpload" SET "lease" = $3, "leaseUntil" = $5::timestamptz, "touchedAt" = $4::timestamptz
  WHERE "instanceId" = $1::uuid AND "id" = $2 AND ("lease" IS NULL OR "leaseUntil" <= $4::timestamptz)
  RETURNING "id"`;
/** $3 lease, $4 offset, $5 state, $6 now, $7 lease until: only by the lease's holder. */
const PROGRESS = `UPDATE "FileUpload" SET "offset" = $4, "state" = $5::jsonb, "touchedAt" = $6::timestamptz, "leaseUntil" = $7::timestamptz
  WHERE "instanceId" = $1::uuid AND "id" = $2 AND "lease" = $3`;
const RENEW = `UPDATE "FileUpload" SET "touchedAt" = $4::timestamptz, "leaseUntil" = $5::timestamptz
  WHERE "instanceId" = $1::uuid AND "id" = $2 AND "lease" = $3`;
const RELEASE = `UPDATE "FileUpload" SET "lease" = NULL, "leaseUntil" = NULL WHERE "instanceId" = $1::uuid AND "id" = $2 AND "lease" = $3`;
const REMOVE = `DELETE FROM "FileUpload" u WHERE u."instanceId" = $1::uuid AND u."id" = $2 RETURNING ${COLUMNS}`;
const OF_FILE = `SELECT ${COLUMNS} FROM "FileUpload" u WHERE u."instanceId" = $1::uuid AND u."fileId" = $2`;

/**
 * $1 touched before (expired), $2 now, $3 limit: uploads to end across instances, oldest first. An upload
 * whose file is no longer New (completed, deleted) takes no more bytes either. A lease still running is
 * left to its request.
 */
const ENDED = `SELECT ${COLUMNS}, i."address" FROM "FileUpload" u
  JOIN "Instance" i ON i."id" = u."instanceId"
  JOIN "File" f ON f."instanceId" = u."instanceId" AND f."fileId" = u."fileId"
  WHERE (u."touchedAt" <= $1::timestamptz OR f."status" <> 'New') AND (u."leaseUntil" IS NULL OR u."leaseUntil" <= $2::timestamptz)
  ORDER BY u."touchedAt" LIMIT $3`;
/** The same condition on one upload, its row locked while the store drops what it holds. */
const LOCK_ENDED = `SELECT u."id" FROM "FileUpload" u
  JOIN "File" f ON f."instanceId" = u."instanceId" AND f."fileId" = u."fileId"
  WHERE u."instanceId" = $1::uuid AND u."id" = $2 AND (u."touchedAt" <= $3::timestamptz OR f."status" <> 'New')
    AND (u."leaseUntil" IS NULL OR u."leaseUntil" <= $4::timestamptz)
  FOR UPDATE OF u`;
const DELETE = `DELETE FROM "FileUpload" WHERE "instanceId" = $1::uuid AND "id" = $2`;
/** Which of these ids are uploads still recorded (any instance): the sweep keeps what the store holds of them. */
const LIVE_IDS = `SELECT u."id" FROM "FileUpload" u JOIN "Instance" i ON i."id" = u."instanceId" WHERE u."id" = ANY($1::text[])`;

export class FileUploadRepository {
  private readonly sql: Sql;

  /** `quotas`: the cluster's (QUOTA_BYTES), for instances without their own. */
  constructor(
    db: GatewayDb,
    private readonly reads = new ReadRouting(db),
    private readonly quotas: QuotaDefaults = UNLIMITED,
  ) {
    this.sql = sqlOn(db.pool);
  }

  /**
   * Records a new upload of a New file when its length fits in the instance's quota beside the bytes
   * stored and the lengths of the other live uploads; the refusal otherwise (nothing written). The usage
   * row is locked first, so concurrent creations (and completions) take turns and each sees what the one
   * before left: their lengths never add up past the quota.
   */
  create(instanceId: string, upload: NewUpload): Promise<CreateRefusal | null> {
    return this.reads.transaction(instanceId, async (tx) => {
      if ((await tx.prepared(LOCK_NEW_FILE, [instanceId, upload.fileId])).length === 0) return 'file';
      const [, locked, reserved, own] = await tx.batch([
        statement(ENSURE_USAGE, [instanceId]),
        statement(LOCK_USAGE, [instanceId]),
        statement(RESERVED, [instanceId, upload.liveAfter]),
        statement(OWN_QUOTA, [instanceId]),
      ]);
      const stored = Number((locked?.rows[0] as { fileBytes: string } | undefined)?.fileBytes ?? 0);
      const held = Number((reserved?.rows[0] as { reserved: string } | undefined)?.reserved ?? 0);
      const ownQuota = (own?.rows[0] as { quota: string | null } | undefined)?.quota;
      const quota = ownQuota == null ? this.quotas.bytes : Number(ownQuota);
      if (stored + held + upload.length > quota) return 'quota';
      await tx.finish([statement(INSERT, [instanceId, upload.id, upload.fileId, upload.length, JSON.stringify(upload.state), upload.now])]);
      return null;
    });
  }

  async find(instanceId: string, id: string): Promise<FileUploadRow | null> {
    const [found] = await this.sql.prepared<Row>(FIND, [instanceId, id]);
    return found ? row(found) : null;
  }

  /** Takes the upload's lease for a request until `until`; false while another request holds it. */
  async claim(instanceId: string, id: string, lease: string, now: Date, until: Date): Promise<boolean> {
    return (await this.sql.count(CLAIM, [instanceId, id, lease, now, until])) > 0;
  }

  /** Records the bytes stored under the lease (and renews it); false when the lease was lost. */
  async progress(instanceId: string, id: string, lease: string, offset: number, state: unknown, now: Date, until: Date): Promise<boolean> {
    return (await this.sql.count(PROGRESS, [instanceId, id, lease, offset, JSON.stringify(state), now, until])) > 0;
  }

  /** Renews the lease (and the upload's life); false when it was lost. */
  async renew(instanceId: string, id: string, lease: string, now: Date, until: Date): Promise<boolean> {
    return (await this.sql.count(RENEW, [instanceId, id, lease, now, until])) > 0;
  }

  async release(instanceId: string, id: string, lease: string): Promise<void> {
    await this.sql.count(RELEASE, [instanceId, id, lease]);
  }

  /** Removes the upload; the row as it was, or null when there was none. */
  async remove(instanceId: string, id: string): Promise<FileUploadRow | null> {
    const [removed] = await this.sql.prepared<Row>(REMOVE, [instanceId, id]);
    return removed ? row(removed) : null;
  }

  /** Every upload of a file. */
  async ofFile(instanceId: string, fileId: string): Promise<FileUploadRow[]> {
    return (await this.sql.prepared<Row>(OF_FILE, [instanceId, fileId])).map(row);
  }

  /** Uploads to end (touched before `expiredBefore`, or of a file no longer New), across instances, oldest first. */
  async ended(expiredBefore: Date, now: Date, limit: number): Promise<EndedUpload[]> {
    return (await this.sql.prepared<Row & { address: string }>(ENDED, [expiredBefore, now, limit])).map((r) => row(r) as EndedUpload);
  }

  /**
   * Deletes an upload that is still to end, after `drop` (the store's abort) ran with its row locked: a
   * request that resumes it meanwhile waits, then finds no upload. If `drop` fails the row stays for
   * the next sweep. True when it was removed.
   */
  removeEnded(instanceId: string, id: string, expiredBefore: Date, now: Date, drop: () => Promise<void>): Promise<boolean> {
    return this.reads.transaction(instanceId, async (tx) => {
      if ((await tx.prepared(LOCK_ENDED, [instanceId, id, expiredBefore, now])).length === 0) return false;
      await drop();
      await tx.count(DELETE, [instanceId, id]);
      return true;
    });
  }

  /** Which of these upload ids are still recorded, in any instance. */
  async liveIds(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    return new Set((await this.sql.prepared<{ id: string }>(LIVE_IDS, [ids])).map((r) => r.id));
  }
}
