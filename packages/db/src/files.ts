// Files and their permissions. Every method takes the instance id first, so no query can reach another
// instance's files; the one exception is `abandonedUploads`, the worker's sweep across instances.
import type { GatewayDb } from './clients';
import { ReadRouting } from './replica';
import type { File, FilePermission, FileStatus } from './generated/gateway/client';
import { eventCte, eventValues, writeEvents, type Actor } from './outbox';
import { isUuid, sqlOn, type Rows, type Sql } from './sql';
import { changeFileUsage, QuotaExceeded, UNLIMITED, type QuotaDefaults } from './usage';

export type { File, FilePermission, FileStatus };
/** One account's permission on a file, as access decisions and clients see it. */
export type FilePermissionEntry = Pick<FilePermission, 'userId' | 'contentReadable'>;
export type FileRecord = File & { permissions: FilePermissionEntry[] };

export interface NewFile {
  name: string;
  source: string;
  tags: string[];
  title?: string;
  description?: string;
  uploaderId: string;
  dateCreated: Date;
  /** Server time of the upload: lastUpdated and createdAt. */
  now: Date;
}

/** A file id split as the slug rule builds it: `<base>[-N]<ext>`. */
export interface FileIdStem {
  base: string;
  ext: string;
}

/** Search criteria (CONTRACT §2); absent fields and empty strings are no condition. */
export interface FileTemplate {
  fileId?: string;
  name?: string;
  source?: string;
  tags?: string[];
  title?: string;
  description?: string;
  status?: FileStatus;
}

/** Whose files a query may return: all of the instance's (the owner), or those a user holds a permission on. */
export type FileScope = { all: true } | { userId: string };

export interface Page {
  take: number;
  skip: number;
}

export type ListingSort = 'name' | 'date' | 'size';

/** What a listing (GET /files/listing) asks for, besides whose files (FileScope); absent fields are no condition. */
export interface ListingQuery {
  status: 'Completed' | 'New';
  /** Each word must start a word of the name, source, title or description. */
  words?: string;
  /** The name's last extension (lower case, no dot) is one of these, or (`notOf`) none of them. */
  extensions?: { of: string[] } | { notOf: string[] };
  /** The file carries this tag. */
  tag?: string;
  /** Whether an account other than the owner holds a permission on the file. */
  shared?: boolean;
  contentPublic?: boolean;
  sort: ListingSort;
  descending: boolean;
}

export interface ListingTotals {
  /** How many files match. */
  total: number;
  /** Their bytes together. */
  totalBytes: number;
}

export interface AbandonedUpload {
  instanceId: string;
  address: string;
  fileId: string;
}

/** The file's permissions (`f` is the file) as a JSON array: an index range scan on FilePermission's primary key. */
const FILE_PERMISSIONS = `COALESCE((SELECT json_agg(json_build_object('userId', p."userId", 'contentReadable', p."contentReadable") ORDER BY p."userId")
    FROM "FilePermission" p WHERE p."instanceId" = f."instanceId" AND p."fileId" = f."fileId"), '[]'::json) AS "permissions"`;

/** A file with its permissions in one row (`f` is the file), so a read is one statement and one round trip. */
const FILE_FIELDS = `f."instanceId", f."fileId", f."name", f."source", f."tags", f."title", f."description",
  f."status", f."size", f."contentPublic", f."thumbnail", f."uploaderId", f."dateCreated", f."lastUpdated", f."createdAt",
  f."trashedAt", ${FILE_PERMISSIONS}`;
const FILE_SELECT = `SELECT ${FILE_FIELDS} FROM "File" f`;

/**
 * Changes one file and reads it back with its permissions, in one statement: `set` and `condition`
 * are fixed texts ($1 instance, $2 fileId, then theirs). No row when the file is missing or the
 * condition fails.
 */
const updateFile = (set: string, event: FileEvent, condition = '') => `WITH f AS (
    UPDATE "File" SET ${set} WHERE "instanceId" = $1::uuid AND "fileId" = $2${condition} RETURNING *
  ),
  ${eventCte('f', event.type, FILE_OBJECT, event.first)}
  SELECT ${FILE_FIELDS} FROM f`;

/** A file change's event (outbox.ts): its type as SQL, and the number of its statement's first event parameter. */
interface FileEvent {
  type: string;
  first: number;
}
const FILE_OBJECT = `jsonb_build_object('fileId', "fileId")`;
const PUBLIC_OR_PRIVATE = `CASE WHEN $3 THEN 'file.public' ELSE 'file.private' END`;

const COMPLETE = updateFile(
  `"status" = 'Completed', "size" = $3, "lastUpdated" = $4::timestamptz`,
  { type: `'file.completed'`, first: 5 },
  ` AND "status" <> 'Deleted'`,
);
const MARK_DELETED = updateFile(`"status" = 'Deleted', "lastUpdated" = $3::timestamptz`, { type: `'file.deleted'`, first: 4 });
const SET_PUBLIC = updateFile(`"contentPublic" = $3, "lastUpdated" = $4::timestamptz`, { type: PUBLIC_OR_PRIVATE, first: 5 });
const UPDATE_METADATA = updateFile(`"name" = $3, "tags" = $4::text[], "title" = $5, "description" = $6, "lastUpdated" = $7::timestamptz`, {
  type: `'file.updated'`,
  first: 8,
});
/** A completed file to the trash: Deleted to every reader (its event is the delete's), bytes and permissions kept. */
const TRASH = updateFile(
  `"status" = 'Deleted', "trashedAt" = $3::timestamptz, "lastUpdated" = $3::timestamptz`,
  { type: `'file.deleted'`, first: 4 },
  ` AND "status" = 'Completed'`,
);
const RESTORE = updateFile(
  `"status" = 'Completed', "trashedAt" = NULL, "lastUpdated" = $3::timestamptz`,
  { type: `'file.restored'`, first: 4 },
  ` AND "trashedAt" IS NOT NULL`,
);
/** Out of the trash for good: the row stays Deleted (history, as a delete left it before the trash). */
const PURGE = updateFile(`"trashedAt" = NULL, "thumbnail" = false`, { type: `'file.purged'`, first: 3 }, ` AND "trashedAt" IS NOT NULL`);
/** The file's state before a completion, locked until its transaction ends. */
const LOCK_FOR_COMPLETION = `SELECT "status", "size"::text AS "size" FROM "File"
  WHERE "instanceId" = $1::uuid AND "fileId" = $2 AND "status" <> 'Deleted' FOR UPDATE`;

/**
 * A timestamp(3) column as `Date.prototype.toISOString` writes it (UTC, milliseconds; years 1–9999,
 * all the API accepts), so a page of search hits needs no Date parsed and formatted again per row.
 */
const isoText = (column: string) => `to_char(f."${column}" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "${column}"`;

/** Only the columns a search hit shows (fewer to decode per row). */
const LISTING_COLUMNS = `f."fileId", f."name", f."source", f."tags", f."title", f."description", f."status", f."size",
  f."contentPublic", f."thumbnail", ${isoText('dateCreated')}, ${isoText('lastUpdated')}, ${FILE_PERMISSIONS}`;
const LISTING_SELECT = `SELECT ${LISTING_COLUMNS} FROM "File" f`;

/** A page of the trash: a search hit's columns and when each was trashed; $2 take, $3 skip. */
const TRASH_LISTING = `SELECT ${LISTING_COLUMNS}, ${isoText('trashedAt')} FROM "File" f
  WHERE f."instanceId" = $1::uuid AND f."trashedAt" IS NOT NULL
  ORDER BY f."trashedAt" DESC, f."fileId" LIMIT $2 OFFSET $3`;

const FILE_BY_ID = `${FILE_SELECT} WHERE f."instanceId" = $1::uuid AND f."fileId" = $2`;
const LISTING_BY_ID = `${LISTING_SELECT} WHERE f."instanceId" = $1::uuid AND f."fileId" = $2`;
const FILES_BY_IDS = `${FILE_SELECT} WHERE f."instanceId" = $1::uuid AND f."fileId" = ANY($2::text[])`;

/**
 * The words a listing's `q` matches: name, source, title and description, with the separators the text
 * search parser keeps inside a token made spaces. Must stay identical to File_words_fts_idx (migration
 * files_listing), or the planner cannot use that index.
 */
const FILE_WORDS = `to_tsvector('simple'::regconfig, translate(f."name" || ' ' || f."source" || ' ' || coalesce(f."title", '') || ' ' || coalesce(f."description", ''), '._/@:-', '      '))`;

/** The name's last extension, lower case, or '' (the rule of the console's files/kinds.ts). */
const EXTENSION = `coalesce(lower(substring(f."name" from '\\.([^.]+)$')), '')`;

/**
 * A listing's order, ascending and descending, each the order of one File_listing_* index walked
 * forwards or backwards (ties by fileId), so a page is read straight from the index.
 */
const LISTING_ORDER: Record<ListingSort, { asc: string; desc: string }> = {
  date: { asc: `f."lastUpdated" ASC, f."fileId" DESC`, desc: `f."lastUpdated" DESC, f."fileId" ASC` },
  name: { asc: `lower(f."name") ASC, f."fileId" ASC`, desc: `lower(f."name") DESC, f."fileId" DESC` },
  size: { asc: `f."size" ASC, f."fileId" ASC`, desc: `f."size" DESC, f."fileId" DESC` },
};

/** Sets the public flag of several files and reads them back with their permissions, in one statement. */
const SET_PUBLIC_MANY = `WITH f AS (
    UPDATE "File" SET "contentPublic" = $3, "lastUpdated" = $4::timestamptz
    WHERE "instanceId" = $1::uuid AND "fileId" = ANY($2::text[]) RETURNING *
  ),
  ${eventCte('f', PUBLIC_OR_PRIVATE, FILE_OBJECT, 5)}
  SELECT ${FILE_FIELDS} FROM f`;

type FileRow = Omit<FileRecord, 'size'> & { size: string | bigint | null };

/**
 * A search hit: what a listing shows of a file, with its timestamps already as ISO text and its size
 * as the decimal text pg gives for int8.
 */
export type FileListing = Pick<
  FileRecord,
  'fileId' | 'name' | 'source' | 'tags' | 'title' | 'description' | 'status' | 'contentPublic' | 'thumbnail' | 'permissions'
> & { size: string | null; dateCreated: string; lastUpdated: string };

/** Counter, file and uploader's permission in one statement (see `create`); $1 instance … $11 now. */
const CREATE_FILE = `WITH counter AS (
    INSERT INTO "FileIdCounter" ("instanceId", "base", "ext", "last") VALUES ($1::uuid, $2, $3, 0)
    ON CONFLICT ("instanceId", "base", "ext") DO UPDATE SET "last" = "FileIdCounter"."last" + 1
    RETURNING "last"
  ), file AS (
    INSERT INTO "File" ("instanceId", "fileId", "name", "source", "tags", "title", "description", "uploaderId",
      "dateCreated", "lastUpdated", "createdAt")
    SELECT $1::uuid, CASE WHEN c."last" = 0 THEN $2 || $3 ELSE $2 || '-' || c."last" || $3 END, $4, $5, $6::text[], $7, $8,
      $9::uuid, $10::timestamptz, $11::timestamptz, $11::timestamptz
    FROM counter c
    RETURNING *
  ), permission AS (
    INSERT INTO "FilePermission" ("instanceId", "fileId", "userId", "contentReadable")
    SELECT f."instanceId", f."fileId", f."uploaderId", true FROM file f
    RETURNING "userId", "contentReadable"
  ),
  ${eventCte('file', `'file.uploaded'`, FILE_OBJECT, 12)}
  SELECT f."instanceId", f."fileId", f."name", f."source", f."tags", f."title", f."description", f."status", f."size",
    f."contentPublic", f."thumbnail", f."uploaderId", f."dateCreated", f."lastUpdated", f."createdAt", f."trashedAt",
    (SELECT json_agg(json_build_object('userId', p."userId", 'contentReadable', p."contentReadable")) FROM permission p) AS "permissions"
  FROM file f`;

/** pg hands int8 over as a string (Prisma as a bigint); the record keeps Prisma's bigint. */
function fileRecord(row: FileRow): FileRecord {
  return Object.assign(row, { size: row.size === null ? null : BigInt(row.size) });
}

/** What PUT /files/file/:fileId replaces: absent title or description clear it. */
export interface FileMetadata {
  name: string;
  tags: string[];
  title: string | null;
  description: string | null;
}

export class FileRepository {
  private readonly sql: Sql;

  /**
   * `reads` sends searches, listings and their totals and tags to a replica when there is one, and
   * learns of every write here so the instance's next reads stay on the primary. `quotas`: the
   * cluster's (QUOTA_BYTES); absent only where nothing completes (the worker, tools).
   */
  constructor(
    db: GatewayDb,
    private readonly reads = new ReadRouting(db),
    private readonly quotas: QuotaDefaults = UNLIMITED,
  ) {
    this.sql = sqlOn(db.pool);
  }

  /** Statements for a read of this instance that may be served by the replica (see ReadRouting). */
  private async lagTolerant(instanceId: string): Promise<Sql> {
    return sqlOn(await this.reads.pool(instanceId));
  }

  /**
   * Allocates the file's id and writes the row (New) and the uploader's permission in one statement,
   * so atomically and in one round trip. The id comes from a per-(instance, base, ext) counter bumped
   * by INSERT … ON CONFLICT DO UPDATE … RETURNING: the row lock serialises concurrent uploads of one
   * name until commit, so each gets its own number, and a failed upload gives its number back.
   * Counters are never lowered, so an id is never reused (a still-valid signed address of a swept
   * upload cannot write into a newer file).
   */
  async create(instanceId: string, stem: FileIdStem, file: NewFile, actor: Actor): Promise<FileRecord> {
    const create = this.sql.prepared<FileRow>(CREATE_FILE, [
      instanceId,
      stem.base,
      stem.ext,
      file.name,
      file.source,
      file.tags,
      file.title ?? null,
      file.description ?? null,
      file.uploaderId,
      file.dateCreated,
      file.now,
      ...eventValues(actor),
    ]);
    const [row] = await this.reads.written(instanceId, create);
    if (!row) throw new Error('file insert returned no row');
    return fileRecord(row);
  }

  /** Every check before a change: one prepared statement. */
  find(instanceId: string, fileId: string): Promise<FileRecord | null> {
    return findIn(this.sql, instanceId, fileId);
  }

  /** File get and content: the file as a search hit reads it (the columns shown, dates as ISO text), one prepared statement. */
  async findListing(instanceId: string, fileId: string): Promise<FileListing | null> {
    const [row] = await this.sql.prepared<FileListing>(LISTING_BY_ID, [instanceId, fileId]);
    return row ?? null;
  }

  /**
   * Moves a New or Completed file to Completed with this size, and counts it in the instance's usage in
   * the same transaction: the file row is locked first (two completions of one file count it once),
   * then the usage row is changed only while within the quota. Null when the file is missing or
   * Deleted; throws QuotaExceeded (nothing changed) when its bytes would pass the quota.
   */
  complete(instanceId: string, fileId: string, size: number, now: Date, actor: Actor): Promise<FileRecord | null> {
    return this.reads.transaction(instanceId, async (tx) => {
      const [before] = await tx.prepared<{ status: FileStatus; size: string | null }>(LOCK_FOR_COMPLETION, [instanceId, fileId]);
      if (!before) return null;
      const change = before.status === 'Completed' ? { files: 0, bytes: size - Number(before.size ?? 0) } : { files: 1, bytes: size };
      if (!(await changeFileUsage(tx, instanceId, change, this.quotas.bytes))) throw new QuotaExceeded('files');
      const [row] = await tx.prepared<FileRow>(COMPLETE, [instanceId, fileId, size, now, ...eventValues(actor)]);
      return row ? fileRecord(row) : null;
    });
  }

  /** Moves a completed file to the trash (its bytes still counted); null when it is not a completed file. */
  trash(instanceId: string, fileId: string, now: Date, actor: Actor): Promise<FileRecord | null> {
    return this.updated(TRASH, [instanceId, fileId, now, ...eventValues(actor)]);
  }

  /** Brings a trashed file back as it was (permissions never left); null when it is not in the trash. */
  restore(instanceId: string, fileId: string, now: Date, actor: Actor): Promise<FileRecord | null> {
    return this.updated(RESTORE, [instanceId, fileId, now, ...eventValues(actor)]);
  }

  /**
   * Takes a file out of the trash for good and out of the instance's usage, in one transaction; the
   * record as it was (its bytes are then the caller's to remove), or null when it is not in the trash.
   */
  purge(instanceId: string, fileId: string, actor: Actor): Promise<FileRecord | null> {
    return this.reads.transaction(instanceId, async (tx) => {
      const [row] = await tx.prepared<FileRow>(PURGE, [instanceId, fileId, ...eventValues(actor)]);
      if (!row) return null;
      await changeFileUsage(tx, instanceId, { files: -1, bytes: -Number(row.size ?? 0) }, this.quotas.bytes);
      return fileRecord(row);
    });
  }

  /** The trashed files of the instance, most recently trashed first. */
  async trashed(instanceId: string, page: Page): Promise<(FileListing & { trashedAt: string })[]> {
    return this.sql.prepared<FileListing & { trashedAt: string }>(TRASH_LISTING, [instanceId, page.take, page.skip]);
  }

  /** Files trashed before `before`, across instances, oldest first (the purge job). */
  trashedBefore(before: Date, limit: number): Promise<AbandonedUpload[]> {
    return this.sql.prepared<AbandonedUpload>(
      `SELECT f."instanceId", i."address", f."fileId"
      FROM "File" f JOIN "Instance" i ON i."id" = f."instanceId"
      WHERE f."trashedAt" < $1::timestamptz
      ORDER BY f."trashedAt" LIMIT $2`,
      [before, limit],
    );
  }

  markDeleted(instanceId: string, fileId: string, now: Date, actor: Actor): Promise<FileRecord | null> {
    return this.updated(MARK_DELETED, [instanceId, fileId, now, ...eventValues(actor)]);
  }

  setPublic(instanceId: string, fileId: string, contentPublic: boolean, now: Date, actor: Actor): Promise<FileRecord | null> {
    return this.updated(SET_PUBLIC, [instanceId, fileId, contentPublic, now, ...eventValues(actor)]);
  }

  /** Replaces the descriptive metadata (the fileId stays); null when the file is missing. */
  updateMetadata(instanceId: string, fileId: string, metadata: FileMetadata, now: Date, actor: Actor): Promise<FileRecord | null> {
    return this.updated(UPDATE_METADATA, [
      instanceId,
      fileId,
      metadata.name,
      metadata.tags,
      metadata.title,
      metadata.description,
      now,
      ...eventValues(actor),
    ]);
  }

  /** Grants (or changes) one user's permission on one file; null when the file is missing. */
  async grant(instanceId: string, fileId: string, userId: string, contentReadable: boolean, actor: Actor): Promise<FileRecord | null> {
    return this.reads.transaction(instanceId, async (tx) => {
      const ids = await upsertPermissions(tx, instanceId, [fileId], userId, contentReadable, actor);
      return ids.length === 0 ? null : findIn(tx, instanceId, fileId);
    });
  }

  /** Removes one user's permission; the updated file, or null when there is no such file. */
  revoke(instanceId: string, fileId: string, userId: string, actor: Actor): Promise<FileRecord | null> {
    return this.reads.transaction(instanceId, async (tx) => {
      await deletePermissions(tx, instanceId, [fileId], userId, actor);
      return findIn(tx, instanceId, fileId);
    });
  }

  /** Grants one user a permission on every file matching the template, in one transaction. */
  grantMatching(instanceId: string, template: FileTemplate, userId: string, contentReadable: boolean, actor: Actor): Promise<FileRecord[]> {
    return this.reads.transaction(instanceId, async (tx) => {
      const ids = await matchingIds(tx.plain, instanceId, template, { all: true });
      await upsertPermissions(tx, instanceId, ids, userId, contentReadable, actor);
      return findAllIn(tx, instanceId, ids);
    });
  }

  /** Removes one user's permissions on every file matching the template, in one transaction. */
  revokeMatching(instanceId: string, template: FileTemplate, userId: string, actor: Actor): Promise<FileRecord[]> {
    return this.reads.transaction(instanceId, async (tx) => {
      const ids = await matchingIds(tx.plain, instanceId, template, { all: true });
      await deletePermissions(tx, instanceId, ids, userId, actor);
      return findAllIn(tx, instanceId, ids);
    });
  }

  /**
   * Files matching the template within the scope, newest lastUpdated first: one statement, its text
   * built from the template's shape and every value bound. A template with tags or words is planned per
   * call, since its best plan depends on the values (a rare tag, a common word); one of exact criteria
   * only (id, name, source, status) is prepared: its plan does not, and a few dozen shapes are parsed
   * and planned once per connection instead of on every search.
   */
  async search(instanceId: string, template: FileTemplate, scope: FileScope, page: Page): Promise<FileListing[]> {
    const { where, values } = searchConditions(instanceId, template, scope);
    values.push(page.take, page.skip);
    // f."lastUpdated" (qualified) is the column, not the output text of the same name.
    const text = `${LISTING_SELECT} WHERE ${where.join(' AND ')}
      ORDER BY f."lastUpdated" DESC, f."fileId" LIMIT $${values.length - 1} OFFSET $${values.length}`;
    const exact = !template.tags?.length && !template.title && !template.description;
    const sql = await this.lagTolerant(instanceId);
    return (exact ? sql.prepared : sql.plain)<FileListing>(text, values);
  }

  /**
   * One page of a listing within the scope, in the query's order: one statement, its text built from
   * the query's shape, every value bound, planned per call as a search is.
   */
  async listing(instanceId: string, query: ListingQuery, scope: FileScope, page: Page): Promise<FileListing[]> {
    const { where, values } = listingConditions(instanceId, query, scope);
    values.push(page.take, page.skip);
    const order = LISTING_ORDER[query.sort][query.descending ? 'desc' : 'asc'];
    const text = `${LISTING_SELECT} WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT $${values.length - 1} OFFSET $${values.length}`;
    return (await this.lagTolerant(instanceId)).plain<FileListing>(text, values);
  }

  /** How many files the listing holds and their bytes (for a state's files, an index-only scan of File_listing_size_idx). */
  async listingTotals(instanceId: string, query: ListingQuery, scope: FileScope): Promise<ListingTotals> {
    const { where, values } = listingConditions(instanceId, query, scope);
    const [row] = await (
      await this.lagTolerant(instanceId)
    ).plain<{ total: number; totalBytes: string }>(
      `SELECT count(*)::int AS "total", coalesce(sum(f."size"), 0)::text AS "totalBytes" FROM "File" f WHERE ${where.join(' AND ')}`,
      values,
    );
    return { total: row?.total ?? 0, totalBytes: Number(row?.totalBytes ?? 0) };
  }

  /**
   * The tags of the completed files within the scope, sorted, at most `limit`. No index lists the
   * distinct elements of arrays: this reads every such file, so clients ask once per screen, not per page.
   */
  async tags(instanceId: string, scope: FileScope, limit: number): Promise<string[]> {
    const values: unknown[] = [instanceId];
    const where = ['f."instanceId" = $1::uuid', `f."status" = 'Completed'`, ...scopeConditions(scope, values)];
    values.push(limit);
    const rows = await (
      await this.lagTolerant(instanceId)
    ).plain<{ tag: string }>(
      `SELECT DISTINCT t AS "tag" FROM "File" f, unnest(f."tags") t WHERE ${where.join(' AND ')} ORDER BY 1 LIMIT $${values.length}`,
      values,
    );
    return rows.map((row) => row.tag);
  }

  /** The records of these ids that exist, in the order given (bulk calls and zip downloads). */
  findAll(instanceId: string, fileIds: string[]): Promise<FileRecord[]> {
    return findAllIn(this.sql, instanceId, fileIds);
  }

  /** Sets the public flag of every existing file of `fileIds` in one statement; the changed records in the order given. */
  async setPublicMany(instanceId: string, fileIds: string[], contentPublic: boolean, now: Date, actor: Actor): Promise<FileRecord[]> {
    if (fileIds.length === 0) return [];
    const rows = await this.reads.written(
      instanceId,
      this.sql.prepared<FileRow>(SET_PUBLIC_MANY, [instanceId, fileIds, contentPublic, now, ...eventValues(actor)]),
    );
    const byId = new Map(rows.map((row) => [row.fileId, fileRecord(row)]));
    return fileIds.flatMap((id) => byId.get(id) ?? []);
  }

  /** Grants (or changes) one user's permission on every existing file of `fileIds`, in one transaction. */
  grantMany(instanceId: string, fileIds: string[], userId: string, contentReadable: boolean, actor: Actor): Promise<FileRecord[]> {
    return this.reads.transaction(instanceId, async (tx) => {
      const granted = await upsertPermissions(tx, instanceId, fileIds, userId, contentReadable, actor);
      const existing = new Set(granted);
      return findAllIn(
        tx,
        instanceId,
        fileIds.filter((id) => existing.has(id)),
      );
    });
  }

  /** Removes one user's permission on every file of `fileIds`, in one transaction; the existing records. */
  revokeMany(instanceId: string, fileIds: string[], userId: string, actor: Actor): Promise<FileRecord[]> {
    return this.reads.transaction(instanceId, async (tx) => {
      await deletePermissions(tx, instanceId, fileIds, userId, actor);
      return findAllIn(tx, instanceId, fileIds);
    });
  }

  /**
   * Records whether a thumbnail is stored for a Completed file; false when the file is not (or no
   * longer) Completed, in which case a thumbnail just written belongs to nothing.
   */
  async setThumbnail(instanceId: string, fileId: string, stored: boolean): Promise<boolean> {
    const changed = await this.sql.count(
      `UPDATE "File" SET "thumbnail" = $3 WHERE "instanceId" = $1::uuid AND "fileId" = $2 AND "status" = 'Completed'`,
      [instanceId, fileId, stored],
    );
    return changed > 0;
  }

  /** Uploads still New that were started before `createdBefore`, across all instances, oldest first. */
  abandonedUploads(createdBefore: Date, limit: number): Promise<AbandonedUpload[]> {
    return this.sql.prepared<AbandonedUpload>(
      `SELECT f."instanceId", i."address", f."fileId"
      FROM "File" f JOIN "Instance" i ON i."id" = f."instanceId"
      WHERE f."status" = 'New' AND f."createdAt" < $1::timestamptz
      ORDER BY f."createdAt" LIMIT $2`,
      [createdBefore, limit],
    );
  }

  /**
   * Which of these (instance address, fileId) pairs name a file that may still hold bytes (New,
   * Completed or in the trash). The orphan sweep removes stored objects of every other pair. Across instances: the
   * sweep is cluster-wide maintenance, never a request.
   */
  async liveFiles(files: { address: string; fileId: string }[]): Promise<{ address: string; fileId: string }[]> {
    if (files.length === 0) return [];
    return this.sql.prepared<{ address: string; fileId: string }>(
      `SELECT i."address", f."fileId"
      FROM unnest($1::text[], $2::text[]) AS k("address", "fileId")
      JOIN "Instance" i ON i."address" = k."address"
      JOIN "File" f ON f."instanceId" = i."id" AND f."fileId" = k."fileId"
      WHERE f."status" <> 'Deleted' OR f."trashedAt" IS NOT NULL`,
      [files.map((f) => f.address), files.map((f) => f.fileId)],
    );
  }

  /**
   * Deletes an abandoned upload (row and permissions) if it is still New and old enough. The row stays
   * locked while `removeBytes` runs, so a concurrent completion waits and then finds no file; if
   * removing the bytes fails, the row stays for the next sweep. True when the file was removed.
   */
  removeAbandoned(
    instanceId: string,
    fileId: string,
    createdBefore: Date,
    removeBytes: () => Promise<void>,
    actor: Actor,
  ): Promise<boolean> {
    return this.reads.transaction(instanceId, async (tx) => {
      const locked = await tx.prepared(
        `SELECT 1 FROM "File"
        WHERE "instanceId" = $1::uuid AND "fileId" = $2 AND "status" = 'New' AND "createdAt" < $3::timestamptz
        FOR UPDATE`,
        [instanceId, fileId, createdBefore],
      );
      if (locked.length === 0) return false;
      await removeBytes();
      await tx.count(`DELETE FROM "File" WHERE "instanceId" = $1::uuid AND "fileId" = $2`, [instanceId, fileId]);
      await writeEvents(tx, instanceId, [{ type: 'file.deleted', object: { fileId } }], actor);
      return true;
    });
  }

  /** One UPDATE … RETURNING of one file; `values` start with the instance id ($1). */
  private async updated(text: string, values: [instanceId: string, ...rest: unknown[]]): Promise<FileRecord | null> {
    const [row] = await this.reads.written(values[0], this.sql.prepared<FileRow>(text, values));
    return row ? fileRecord(row) : null;
  }
}

async function findIn(sql: Sql, instanceId: string, fileId: string): Promise<FileRecord | null> {
  const [row] = await sql.prepared<FileRow>(FILE_BY_ID, [instanceId, fileId]);
  return row ? fileRecord(row) : null;
}

/** The records of these ids, in the order given. */
async function findAllIn(sql: Sql, instanceId: string, ids: string[]): Promise<FileRecord[]> {
  if (ids.length === 0) return [];
  const found = await sql.prepared<FileRow>(FILES_BY_IDS, [instanceId, ids]);
  const byId = new Map(found.map((row) => [row.fileId, fileRecord(row)]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** Inserts or updates one user's permission on each existing file of `ids`; the ids it touched. */
const PERMISSION_OBJECT = `jsonb_build_object('fileId', "fileId", 'userId', "userId", 'contentReadable', "contentReadable")`;

async function upsertPermissions(
  sql: Sql,
  instanceId: string,
  ids: string[],
  userId: string,
  contentReadable: boolean,
  actor: Actor,
): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await sql.prepared<{ fileId: string }>(
    `WITH "shared" AS (
      INSERT INTO "FilePermission" ("instanceId", "fileId", "userId", "contentReadable")
      SELECT f."instanceId", f."fileId", $3::uuid, $4::boolean
      FROM "File" f WHERE f."instanceId" = $1::uuid AND f."fileId" = ANY($2::text[])
      ON CONFLICT ("instanceId", "fileId", "userId") DO UPDATE SET "contentReadable" = EXCLUDED."contentReadable"
      RETURNING "fileId", "userId", "contentReadable"
    ),
    ${eventCte('"shared"', `'file.shared'`, PERMISSION_OBJECT, 5)}
    SELECT "fileId" FROM "shared"`,
    [instanceId, ids, userId, contentReadable, ...eventValues(actor)],
  );
  return rows.map((row) => row.fileId);
}

/** Removes one user's permission on each file of `ids` (a user id that is no uuid holds none). */
async function deletePermissions(sql: Sql, instanceId: string, ids: string[], userId: string, actor: Actor): Promise<void> {
  if (ids.length === 0 || !isUuid(userId)) return;
  await sql.prepared(
    `WITH "unshared" AS (
      DELETE FROM "FilePermission" WHERE "instanceId" = $1::uuid AND "fileId" = ANY($2::text[]) AND "userId" = $3::uuid
      RETURNING "fileId", "userId"
    ),
    ${eventCte('"unshared"', `'file.unshared'`, `jsonb_build_object('fileId', "fileId", 'userId', "userId")`, 4)}
    SELECT count(*) FROM "unshared"`,
    [instanceId, ids, userId, ...eventValues(actor)],
  );
}

/** The ids of the files matching the template, newest lastUpdated first (bulk grants, in their transaction). */
async function matchingIds(rows: Rows, instanceId: string, template: FileTemplate, scope: FileScope): Promise<string[]> {
  const { where, values } = searchConditions(instanceId, template, scope);
  const text = `SELECT f."fileId" FROM "File" f WHERE ${where.join(' AND ')} ORDER BY f."lastUpdated" DESC, f."fileId"`;
  return (await rows<{ fileId: string }>(text, values)).map((row) => row.fileId);
}

/** The WHERE conditions of a template search (`f` is the file) and their values: every value is bound. */
function searchConditions(instanceId: string, t: FileTemplate, scope: FileScope): { where: string[]; values: unknown[] } {
  const values: unknown[] = [instanceId];
  const where = ['f."instanceId" = $1::uuid'];
  const bind = (value: unknown) => `$${values.push(value)}`;
  if (t.fileId) where.push(`f."fileId" = ${bind(t.fileId)}`);
  if (t.name) where.push(`f."name" = ${bind(t.name)}`);
  if (t.source) where.push(`f."source" = ${bind(t.source)}`);
  if (t.tags && t.tags.length > 0) where.push(`f."tags" @> ${bind(t.tags)}::text[]`);
  // These expressions must match the GIN indexes of the files_search migration.
  const title = prefixQuery(t.title);
  if (title) where.push(`to_tsvector('simple'::regconfig, coalesce(f."title", '')) @@ to_tsquery('simple'::regconfig, ${bind(title)})`);
  const description = prefixQuery(t.description);
  if (description) {
    where.push(`to_tsvector('simple'::regconfig, coalesce(f."description", '')) @@ to_tsquery('simple'::regconfig, ${bind(description)})`);
  }
  // Deleted files are history: they show only when asked for.
  where.push(t.status ? `f."status" = ${bind(t.status)}::"FileStatus"` : `f."status" <> 'Deleted'`);
  where.push(...scopeConditions(scope, values));
  return { where, values };
}

/** The condition that keeps a query within the scope (`f` is the file), its values appended to `values`. */
function scopeConditions(scope: FileScope, values: unknown[]): string[] {
  if (!('userId' in scope)) return [];
  // A semi-join on FilePermission's (instanceId, userId) index, whatever the number of files.
  return [
    `EXISTS (SELECT 1 FROM "FilePermission" sp
      WHERE sp."instanceId" = f."instanceId" AND sp."fileId" = f."fileId" AND sp."userId" = $${values.push(scope.userId)}::uuid)`,
  ];
}

/** The WHERE conditions of a listing (`f` is the file) and their values: every value is bound. */
function listingConditions(instanceId: string, q: ListingQuery, scope: FileScope): { where: string[]; values: unknown[] } {
  const values: unknown[] = [instanceId];
  const bind = (value: unknown) => `$${values.push(value)}`;
  const where = ['f."instanceId" = $1::uuid', `f."status" = ${bind(q.status)}::"FileStatus"`];
  const words = prefixQuery(q.words);
  if (words) where.push(`${FILE_WORDS} @@ to_tsquery('simple'::regconfig, ${bind(words)})`);
  if (q.extensions) {
    where.push(
      'of' in q.extensions
        ? `${EXTENSION} = ANY(${bind(q.extensions.of)}::text[])`
        : `${EXTENSION} <> ALL(${bind(q.extensions.notOf)}::text[])`,
    );
  }
  if (q.tag) where.push(`f."tags" @> ARRAY[${bind(q.tag)}::text]`);
  if (q.contentPublic !== undefined) where.push(`f."contentPublic" = ${bind(q.contentPublic)}`);
  if (q.shared !== undefined) {
    where.push(`${q.shared ? '' : 'NOT '}EXISTS (SELECT 1 FROM "FilePermission" op
      JOIN "User" ou ON ou."instanceId" = op."instanceId" AND ou."id" = op."userId"
      WHERE op."instanceId" = f."instanceId" AND op."fileId" = f."fileId" AND ou."kind" <> 'owner')`);
  }
  where.push(...scopeConditions(scope, values));
  return { where, values };
}

/**
 * A tsquery in which every word of the text must match the start of a word (`short desc` →
 * `short:* & desc:*`). Words are reduced to letters and digits (the parser splits at `_` too), so no
 * tsquery syntax reaches Postgres from a client; null when the text has no word (no condition).
 */
export function prefixQuery(text: string | undefined): string | null {
  const words = text?.toLowerCase().match(/[\p{L}\p{N}]+/gu);
  return words && words.length > 0 ? words.map((word) => `${word}:*`).join(' & ') : null;
}
