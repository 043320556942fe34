// Files and their permissions. Every method takes the instance id first, so no query can reach another
// instance's files; the one exception is `abandonedUploads`, the worker's sweep across instances.
import type { GatewayDb } from './clients';
import { ReadRouting } from './replica';
import type { File, FilePermission, FileStatus } from './generated/gateway/client';
import { eventStatements, writeEvents, type Actor, type NewEvent } from './outbox';
import { isUuid, pageClause, sqlOn, statement, type Sql, type Statement, type TransactionStatements } from './sql';
import { changeFileUsage, QuotaExceeded, UNLIMITED, type QuotaDefaults } from './usage';

export type { File, FilePermission, FileStatus };
/** One account's permission on a file, as access decisions and clients see it. */
export type FilePermissionEntry = Pick<FilePermission, 'userId' | 'contentReadable'>;
/** A file as the repository reads it; whether its objects are still moving stays the repository's (settle). */
/** The photo timeline alone reads takenLocal (photos()). */
export type FileRecord = Omit<File, 'bytesMoving' | 'takenLocal'> & { permissions: FilePermissionEntry[] };

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

/** One picture of the photo timeline: a completed file with a thumbnail, by its date. */
export interface Photo {
  fileId: string;
  name: string;
  /** When it was taken, as ISO text (the order of the timeline): its EXIF date, else dateCreated. */
  takenAt: string;
  /** The clock where it was taken, as ISO text without a zone, when its EXIF says. */
  takenLocal: string | null;
  width: number | null;
  height: number | null;
}

/** Where a page of the timeline starts: after this picture (the last one of the page before). */
export interface PhotoCursor {
  takenAt: Date;
  fileId: string;
}

export interface AbandonedUpload {
  instanceId: string;
  address: string;
  fileId: string;
}

/** The file's permissions (`f` is the file) as a JSON array: an index range scan on FilePermission's primary key. */
const FILE_PERMISSIONS = `COALESCE((SELECT json_agg(json_build_object('userId', p."userId", 'contentReadable', p."contentReadable") ORDER BY p."userId")
    FROM "FilePermission" p WHERE p."instanceId" = $1::uuid AND p."fileId" = f."fileId"), '[]'::json) AS "permissions"`;

/**
 * Files named by id, each with its permissions, in one statement: one row per permission (a file
 * without any: one row of nulls), folded by withPermissions. Joined rather than aggregated as on a page
 * (FILE_PERMISSIONS, where a row per permission would break the LIMIT): the subquery and its json_agg
 * cost a one-file read about 30 µs more of PostgreSQL's CPU (docs/performance.md).
 */
const PERMISSION_COLUMNS = `p."userId" AS "permissionUserId", p."contentReadable" AS "permissionContentReadable"`;
const WITH_PERMISSIONS = `"File" f LEFT JOIN "FilePermission" p ON p."instanceId" = f."instanceId" AND p."fileId" = f."fileId"`;
const FILE_COLUMNS = `f."instanceId", f."fileId", f."name", f."source", f."tags", f."title", f."description",
  f."status", f."size", f."contentPublic", f."thumbnail", f."width", f."height", f."takenAt", f."uploaderId", f."dateCreated", f."lastUpdated",
  f."createdAt", f."trashedAt"`;
const FILE_SELECT = `SELECT ${FILE_COLUMNS}, ${PERMISSION_COLUMNS} FROM ${WITH_PERMISSIONS}`;

/**
 * Changes one file: `set` and `condition` are fixed texts ($1 instance, $2 fileId, then theirs). No row
 * when the file is missing or the condition fails. The change's event and the file read back follow in
 * the same transaction (FileRepository.updated).
 */
const updateFile = (set: string, condition = '') =>
  `UPDATE "File" SET ${set} WHERE "instanceId" = $1::uuid AND "fileId" = $2${condition} RETURNING "fileId", "size"`;

const COMPLETE = updateFile(`"status" = 'Completed', "size" = $3, "lastUpdated" = $4::timestamptz`, ` AND "status" <> 'Deleted'`);
const MARK_DELETED = updateFile(`"status" = 'Deleted', "lastUpdated" = $3::timestamptz`);
const SET_PUBLIC = updateFile(`"contentPublic" = $3, "lastUpdated" = $4::timestamptz`);
const UPDATE_METADATA = updateFile(`"name" = $3, "tags" = $4::text[], "title" = $5, "description" = $6, "lastUpdated" = $7::timestamptz`);
/**
 * A completed file to the trash: Deleted to every reader (its event is the delete's), bytes and
 * permissions kept; its objects are to move to the trash keys (bytesMoving, FileRepository.settle).
 */
const TRASH = updateFile(
  `"status" = 'Deleted', "trashedAt" = $3::timestamptz, "lastUpdated" = $3::timestamptz, "bytesMoving" = true`,
  ` AND "status" = 'Completed'`,
);
const RESTORE = updateFile(
  `"status" = 'Completed', "trashedAt" = NULL, "lastUpdated" = $3::timestamptz, "bytesMoving" = true`,
  ` AND "trashedAt" IS NOT NULL`,
);
/** Out of the trash for good: the row stays Deleted (history, as a delete left it before the trash); no move is left to finish. */
const PURGE = updateFile(`"trashedAt" = NULL, "thumbnail" = false, "bytesMoving" = false`, ` AND "trashedAt" IS NOT NULL`);
/** A file whose objects are still to move, locked until the move is done: whether they belong in the trash. */
const LOCK_FOR_MOVE = `SELECT "trashedAt" IS NOT NULL AS "trashed" FROM "File"
  WHERE "instanceId" = $1::uuid AND "fileId" = $2 AND "bytesMoving" FOR UPDATE`;
const MOVED = `UPDATE "File" SET "bytesMoving" = false WHERE "instanceId" = $1::uuid AND "fileId" = $2`;
const fileEvent = (type: string, fileId: string): NewEvent => ({ type, object: { fileId } });
const publicEvent = (contentPublic: boolean) => (contentPublic ? 'file.public' : 'file.private');
/** The resumable uploads of a file that hold every byte (their object is made): a completion ends them. */
const FINISHED_UPLOADS = `DELETE FROM "FileUpload" WHERE "instanceId" = $1::uuid AND "fileId" = $2 AND "offset" = "length"`;
/**
 * No resumable upload of the file (`f`) was touched after $n: an upload under way keeps its file, however
 * old, from being swept as abandoned (it expires UPLOAD_DEADLINE after its last request, as files do after creation).
 * `instanceId`: the file's own across instances (the sweep), the bound one for one instance's file (one shard on Citus).
 */
const noUploadSince = (n: number, instanceId = 'f."instanceId"') => `NOT EXISTS (SELECT 1 FROM "FileUpload" u
  WHERE u."instanceId" = ${instanceId} AND u."fileId" = f."fileId" AND u."touchedAt" > $${n}::timestamptz)`;
/** The file's state before a completion, locked until its transaction ends. */
const LOCK_FOR_COMPLETION = `SELECT "status", "size"::text AS "size" FROM "File"
  WHERE "instanceId" = $1::uuid AND "fileId" = $2 AND "status" <> 'Deleted' FOR UPDATE`;

/**
 * A timestamp(3) column as `Date.prototype.toISOString` writes it (UTC, milliseconds; years 1–9999,
 * all the API accepts), so a page of search hits needs no Date parsed and formatted again per row.
 */
const isoText = (column: string) => `to_char(f."${column}" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "${column}"`;

/** Only the columns a search hit shows (fewer to decode per row). */
const HIT_COLUMNS = `f."fileId", f."name", f."source", f."tags", f."title", f."description", f."status", f."size",
  f."contentPublic", f."thumbnail", ${isoText('dateCreated')}, ${isoText('lastUpdated')}`;
const LISTING_COLUMNS = `${HIT_COLUMNS}, ${FILE_PERMISSIONS}`;
const LISTING_SELECT = `SELECT ${LISTING_COLUMNS} FROM "File" f`;

/** The trash: a search hit's columns and when each was trashed, before its page (pageClause). */
const TRASH_LISTING = `SELECT ${LISTING_COLUMNS}, ${isoText('trashedAt')} FROM "File" f
  WHERE f."instanceId" = $1::uuid AND f."trashedAt" IS NOT NULL
  ORDER BY f."trashedAt" DESC, f."fileId"`;

const FILE_BY_ID = `${FILE_SELECT} WHERE f."instanceId" = $1::uuid AND f."fileId" = $2`;
const LISTING_BY_ID = `SELECT ${HIT_COLUMNS}, ${PERMISSION_COLUMNS} FROM ${WITH_PERMISSIONS} WHERE f."instanceId" = $1::uuid AND f."fileId" = $2`;
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

/**
 * The photo timeline: completed files with a thumbnail, the most recently taken first (ties by fileId), a page
 * after a cursor ($2, $3; the first page's is infinity). Each is a range scan of the partial index
 * File_photos_idx (migration photos), which holds exactly these files in this order, so a page deep in
 * the timeline reads a page's rows. A user's timeline keeps to the files whose content they may read
 * (the owner's holds them all).
 */
const photosText = (user: string) => `SELECT f."fileId", f."name", ${isoText('takenAt')},
  to_char(f."takenLocal", 'YYYY-MM-DD"T"HH24:MI:SS.MS') AS "takenLocal", f."width", f."height" FROM "File" f
  WHERE f."instanceId" = $1::uuid AND f."status" = 'Completed' AND f."thumbnail" AND (f."takenAt", f."fileId") < ($2::timestamptz, $3::text)
  ${user} ORDER BY f."takenAt" DESC, f."fileId" DESC LIMIT $4`;
/** The condition that a user ($n) may read a file's content. */
const contentGiven = (n: number) => `AND EXISTS (SELECT 1 FROM "FilePermission" sp WHERE sp."instanceId" = $1::uuid
  AND sp."fileId" = f."fileId" AND sp."userId" = $${n}::uuid AND sp."contentReadable")`;
const PHOTOS = { owner: photosText(''), user: photosText(contentGiven(5)) };
/** How many pictures the timeline holds (an index-only count of File_photos_idx for the owner). */
const photoCountText = (user: string) =>
  `SELECT count(*)::int AS "total" FROM "File" f WHERE f."instanceId" = $1::uuid AND f."status" = 'Completed' AND f."thumbnail" ${user}`;
const PHOTO_COUNT = { owner: photoCountText(''), user: photoCountText(contentGiven(2)) };

const SET_PUBLIC_MANY = `UPDATE "File" SET "contentPublic" = $3, "lastUpdated" = $4::timestamptz
  WHERE "instanceId" = $1::uuid AND "fileId" = ANY($2::text[]) RETURNING "fileId"`;

type FileRow = Omit<FileRecord, 'size'> & { size: string | bigint | null };

/**
 * A search hit: what a listing shows of a file, with its timestamps already as ISO text and its size
 * as the decimal text pg gives for int8.
 */
export type FileListing = Pick<
  FileRecord,
  'fileId' | 'name' | 'source' | 'tags' | 'title' | 'description' | 'status' | 'contentPublic' | 'thumbnail' | 'permissions'
> & { size: string | null; dateCreated: string; lastUpdated: string };

/** The next number of a file id stem ($1 instance, $2 base, $3 ext): 0 for the first file of the name. */
const NEXT_NUMBER = `INSERT INTO "FileIdCounter" ("instanceId", "base", "ext", "last") VALUES ($1::uuid, $2, $3, 0)
  ON CONFLICT ("instanceId", "base", "ext") DO UPDATE SET "last" = "FileIdCounter"."last" + 1
  RETURNING "last"`;
const INSERT_FILE = `INSERT INTO "File" ("instanceId", "fileId", "name", "source", "tags", "title", "description", "uploaderId",
    "dateCreated", "lastUpdated", "createdAt")
  VALUES ($1::uuid, $2, $3, $4, $5::text[], $6, $7, $8::uuid, $9::timestamptz, $10::timestamptz, $10::timestamptz)
  RETURNING "instanceId", "fileId", "name", "source", "tags", "title", "description", "status", "size", "contentPublic", "thumbnail",
    "width", "height", "takenAt", "uploaderId", "dateCreated", "lastUpdated", "createdAt", "trashedAt"`;
const INSERT_UPLOADER_PERMISSION = `INSERT INTO "FilePermission" ("instanceId", "fileId", "userId", "contentReadable") VALUES ($1::uuid, $2, $3::uuid, true)`;

/** One of a file's permissions beside its columns (FILE_SELECT, LISTING_BY_ID); nulls for a file without any. */
type WithPermission<T> = Omit<T, 'permissions'> & { permissionUserId: string | null; permissionContentReadable: boolean | null };

/** Joined rows folded into one object per file, in the order first seen, its permissions by user id (as FILE_PERMISSIONS orders them). */
function withPermissions<T extends { fileId: string; permissions: FilePermissionEntry[] }>(rows: WithPermission<T>[]): T[] {
  const files = new Map<string, T>();
  for (const { permissionUserId: userId, permissionContentReadable: contentReadable, ...columns } of rows) {
    let file = files.get(columns.fileId);
    if (!file) files.set(columns.fileId, (file = Object.assign(columns, { permissions: [] as FilePermissionEntry[] }) as unknown as T));
    if (userId !== null) file.permissions.push({ userId, contentReadable: contentReadable === true });
  }
  for (const file of files.values()) if (file.permissions.length > 1) file.permissions.sort((a, b) => (a.userId < b.userId ? -1 : 1));
  return [...files.values()];
}

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
    return this.reads.transaction(instanceId, async (tx) => {
      const [counter] = await tx.prepared<{ last: string }>(NEXT_NUMBER, [instanceId, stem.base, stem.ext]);
      const last = Number(counter!.last);
      const fileId = last === 0 ? `${stem.base}${stem.ext}` : `${stem.base}-${last}${stem.ext}`;
      const [inserted] = await tx.finish([
        statement(INSERT_FILE, [
          instanceId,
          fileId,
          file.name,
          file.source,
          file.tags,
          file.title ?? null,
          file.description ?? null,
          file.uploaderId,
          file.dateCreated,
          file.now,
        ]),
        statement(INSERT_UPLOADER_PERMISSION, [instanceId, fileId, file.uploaderId]),
        ...eventStatements(instanceId, [fileEvent('file.uploaded', fileId)], actor),
      ]);
      const row = inserted!.rows[0] as Omit<FileRow, 'permissions'>;
      return fileRecord(Object.assign(row, { permissions: [{ userId: file.uploaderId, contentReadable: true }] }));
    });
  }

  /** Every check before a change: one prepared statement. */
  find(instanceId: string, fileId: string): Promise<FileRecord | null> {
    return findIn(this.sql, instanceId, fileId);
  }

  /** File get and content: the file as a search hit reads it (the columns shown, dates as ISO text), one prepared statement. */
  async findListing(instanceId: string, fileId: string): Promise<FileListing | null> {
    const [file] = withPermissions(await this.sql.prepared<WithPermission<FileListing>>(LISTING_BY_ID, [instanceId, fileId]));
    return file ?? null;
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
      // A resumable upload that made these bytes reserved its length in the quota until now: the bytes count instead.
      await tx.count(FINISHED_UPLOADS, [instanceId, fileId]);
      return changedFile(tx, COMPLETE, [instanceId, fileId, size, now], 'file.completed', actor);
    });
  }

  /** Moves a completed file to the trash (its bytes still counted); null when it is not a completed file. */
  trash(instanceId: string, fileId: string, now: Date, actor: Actor): Promise<FileRecord | null> {
    return this.updated(TRASH, [instanceId, fileId, now], 'file.deleted', actor);
  }

  /** Brings a trashed file back as it was (permissions never left); null when it is not in the trash. */
  restore(instanceId: string, fileId: string, now: Date, actor: Actor): Promise<FileRecord | null> {
    return this.updated(RESTORE, [instanceId, fileId, now], 'file.restored', actor);
  }

  /**
   * Takes a file out of the trash for good and out of the instance's usage, in one transaction; the
   * record as it was (its bytes are then the caller's to remove), or null when it is not in the trash.
   */
  purge(instanceId: string, fileId: string, actor: Actor): Promise<FileRecord | null> {
    return this.reads.transaction(instanceId, async (tx) => {
      const [row] = await tx.prepared<{ size: string | null }>(PURGE, [instanceId, fileId]);
      if (!row) return null;
      await changeFileUsage(tx, instanceId, { files: -1, bytes: -Number(row.size ?? 0) }, this.quotas.bytes);
      return finishWithFile(tx, instanceId, fileId, [fileEvent('file.purged', fileId)], actor);
    });
  }

  /**
   * Runs `move` for a file whose objects are still to move into the trash or out of it (`trashed`: where
   * they belong now), then clears the flag, holding the row all along: a restore, a delete or a purge of
   * the file waits, and so does a second mover, which then finds nothing to do. False when no move was due.
   */
  settle(instanceId: string, fileId: string, move: (trashed: boolean) => Promise<void>): Promise<boolean> {
    return this.reads.transaction(instanceId, async (tx) => {
      const [row] = await tx.prepared<{ trashed: boolean }>(LOCK_FOR_MOVE, [instanceId, fileId]);
      if (!row) return false;
      await move(row.trashed);
      await tx.finish([statement(MOVED, [instanceId, fileId])]);
      return true;
    });
  }

  /** Files whose objects are still to move (a crash cut the move short), across instances (the worker). */
  unsettled(limit: number): Promise<AbandonedUpload[]> {
    return this.sql.prepared<AbandonedUpload>(
      `SELECT f."instanceId", i."address", f."fileId"
      FROM "File" f JOIN "Instance" i ON i."id" = f."instanceId"
      WHERE f."bytesMoving" LIMIT $1`,
      [limit],
    );
  }

  /** The trashed files of the instance, most recently trashed first. */
  async trashed(instanceId: string, page: Page): Promise<(FileListing & { trashedAt: string })[]> {
    const values: unknown[] = [instanceId];
    return this.sql.prepared<FileListing & { trashedAt: string }>(`${TRASH_LISTING} ${pageClause(values, page)}`, values);
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
    return this.updated(MARK_DELETED, [instanceId, fileId, now], 'file.deleted', actor);
  }

  setPublic(instanceId: string, fileId: string, contentPublic: boolean, now: Date, actor: Actor): Promise<FileRecord | null> {
    return this.updated(SET_PUBLIC, [instanceId, fileId, contentPublic, now], publicEvent(contentPublic), actor);
  }

  /** Replaces the descriptive metadata (the fileId stays); null when the file is missing. */
  updateMetadata(instanceId: string, fileId: string, metadata: FileMetadata, now: Date, actor: Actor): Promise<FileRecord | null> {
    return this.updated(
      UPDATE_METADATA,
      [instanceId, fileId, metadata.name, metadata.tags, metadata.title, metadata.description, now],
      'file.updated',
      actor,
    );
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
      const ids = await matchingIds(tx, instanceId, template, { all: true });
      await upsertPermissions(tx, instanceId, ids, userId, contentReadable, actor);
      return findAllIn(tx, instanceId, ids);
    });
  }

  /** Removes one user's permissions on every file matching the template, in one transaction. */
  revokeMatching(instanceId: string, template: FileTemplate, userId: string, actor: Actor): Promise<FileRecord[]> {
    return this.reads.transaction(instanceId, async (tx) => {
      const ids = await matchingIds(tx, instanceId, template, { all: true });
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
    // f."lastUpdated" (qualified) is the column, not the output text of the same name.
    const text = `${LISTING_SELECT} WHERE ${where.join(' AND ')}
      ORDER BY f."lastUpdated" DESC, f."fileId" ${pageClause(values, page)}`;
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
    const order = LISTING_ORDER[query.sort][query.descending ? 'desc' : 'asc'];
    const text = `${LISTING_SELECT} WHERE ${where.join(' AND ')} ORDER BY ${order} ${pageClause(values, page)}`;
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

  /** One page of the photo timeline within the scope, after `cursor` (from the newest without one). */
  async photos(instanceId: string, scope: FileScope, cursor: PhotoCursor | undefined, take: number): Promise<Photo[]> {
    const user = 'userId' in scope ? [scope.userId] : [];
    const after = cursor ? [cursor.takenAt, cursor.fileId] : ['infinity', ''];
    return (await this.lagTolerant(instanceId)).prepared<Photo>(PHOTOS[user.length ? 'user' : 'owner'], [
      instanceId,
      ...after,
      take,
      ...user,
    ]);
  }

  /** How many pictures the photo timeline within the scope holds. */
  async photoCount(instanceId: string, scope: FileScope): Promise<number> {
    const user = 'userId' in scope ? [scope.userId] : [];
    const [row] = await (
      await this.lagTolerant(instanceId)
    ).prepared<{ total: number }>(PHOTO_COUNT[user.length ? 'user' : 'owner'], [instanceId, ...user]);
    return row?.total ?? 0;
  }

  /** The records of these ids that exist, in the order given (bulk calls and zip downloads). */
  findAll(instanceId: string, fileIds: string[]): Promise<FileRecord[]> {
    return findAllIn(this.sql, instanceId, fileIds);
  }

  /** Sets the public flag of every existing file of `fileIds` in one statement; the changed records in the order given. */
  async setPublicMany(instanceId: string, fileIds: string[], contentPublic: boolean, now: Date, actor: Actor): Promise<FileRecord[]> {
    if (fileIds.length === 0) return [];
    return this.reads.transaction(instanceId, async (tx) => {
      const changed = await tx.prepared<{ fileId: string }>(SET_PUBLIC_MANY, [instanceId, fileIds, contentPublic, now]);
      const ids = new Set(changed.map((row) => row.fileId));
      const events = [...ids].map((id) => fileEvent(publicEvent(contentPublic), id));
      const answers = await tx.finish([...eventStatements(instanceId, events, actor), statement(FILES_BY_IDS, [instanceId, [...ids]])]);
      return inOrder(answers.at(-1)!.rows as WithPermission<FileRow>[], fileIds);
    });
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
   * Records whether a thumbnail is stored for a Completed file, with the picture's size and when it was
   * taken (null: none, or the file's dateCreated); false when the file is not (or no longer) Completed, in
   * which case a thumbnail just written belongs to nothing.
   */
  async setThumbnail(
    instanceId: string,
    fileId: string,
    picture: { width: number; height: number; taken: { at: Date; local: Date } | null } | null,
  ): Promise<boolean> {
    const taken = picture?.taken;
    const changed = await this.sql.count(
      `UPDATE "File" SET "thumbnail" = $3, "width" = $4, "height" = $5,
         "takenAt" = CASE WHEN $3 THEN coalesce($6::timestamptz, "dateCreated") END, "takenLocal" = $7::timestamp
       WHERE "instanceId" = $1::uuid AND "fileId" = $2 AND "status" = 'Completed'`,
      // The clock as text without a zone: a Date would be sent at the gateway's own offset.
      [
        instanceId,
        fileId,
        picture !== null,
        picture?.width ?? null,
        picture?.height ?? null,
        taken?.at ?? null,
        taken ? taken.local.toISOString().slice(0, -1) : null,
      ],
    );
    return changed > 0;
  }

  /**
   * Uploads still New that were started before `createdBefore`, and whose resumable uploads (if any) were
   * last touched before it too, across all instances, oldest first.
   */
  abandonedUploads(createdBefore: Date, limit: number): Promise<AbandonedUpload[]> {
    return this.sql.prepared<AbandonedUpload>(
      `SELECT f."instanceId", i."address", f."fileId"
      FROM "File" f JOIN "Instance" i ON i."id" = f."instanceId"
      WHERE f."status" = 'New' AND f."createdAt" < $1::timestamptz AND ${noUploadSince(1)}
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
        `SELECT 1 FROM "File" f
        WHERE f."instanceId" = $1::uuid AND f."fileId" = $2 AND f."status" = 'New' AND f."createdAt" < $3::timestamptz AND ${noUploadSince(3, '$1::uuid')}
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

  /** One change of one file (`text`: updateFile's), its event and the file read back; `values` start with the instance and the file. */
  private updated(
    text: string,
    values: [instanceId: string, fileId: string, ...rest: unknown[]],
    type: string,
    actor: Actor,
  ): Promise<FileRecord | null> {
    return this.reads.transaction(values[0], (tx) => changedFile(tx, text, values, type, actor));
  }
}

async function findIn(sql: Sql, instanceId: string, fileId: string): Promise<FileRecord | null> {
  const [file] = withPermissions(await sql.prepared<WithPermission<FileRow>>(FILE_BY_ID, [instanceId, fileId]));
  return file ? fileRecord(file) : null;
}

/** The records of these ids, in the order given. */
async function findAllIn(sql: Sql, instanceId: string, ids: string[]): Promise<FileRecord[]> {
  if (ids.length === 0) return [];
  return inOrder(await sql.prepared<WithPermission<FileRow>>(FILES_BY_IDS, [instanceId, ids]), ids);
}

/** The records of rows in the order of `ids` (ids without a row left out). */
function inOrder(rows: WithPermission<FileRow>[], ids: string[]): FileRecord[] {
  const byId = new Map(withPermissions(rows).map((row) => [row.fileId, fileRecord(row)]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/**
 * A change of one file in `tx` (`text`: updateFile's; `values` start with the instance and the file), then
 * its event and the file read back, sent with the COMMIT; null when nothing changed.
 */
async function changedFile(
  tx: TransactionStatements,
  text: string,
  values: [instanceId: string, fileId: string, ...rest: unknown[]],
  type: string,
  actor: Actor,
): Promise<FileRecord | null> {
  const [instanceId, fileId] = values;
  const [row] = await tx.prepared(text, values);
  return row ? finishWithFile(tx, instanceId, fileId, [fileEvent(type, fileId)], actor) : null;
}

/** Ends the transaction with its events, reading the file back in the same round trip. */
async function finishWithFile(
  tx: TransactionStatements,
  instanceId: string,
  fileId: string,
  events: NewEvent[],
  actor: Actor,
): Promise<FileRecord | null> {
  const answers = await tx.finish([...eventStatements(instanceId, events, actor), statement(FILE_BY_ID, [instanceId, fileId])]);
  const [file] = withPermissions(answers.at(-1)!.rows as WithPermission<FileRow>[]);
  return file ? fileRecord(file) : null;
}

/** $1 instance, $2 user, $3 content readable, then each file. */
const upsertPermissionRows = (count: number) =>
  `INSERT INTO "FilePermission" ("instanceId", "fileId", "userId", "contentReadable") VALUES ${Array.from(
    { length: count },
    (_, i) => `($1::uuid, $${4 + i}, $2::uuid, $3::boolean)`,
  ).join(', ')}
  ON CONFLICT ("instanceId", "fileId", "userId") DO UPDATE SET "contentReadable" = EXCLUDED."contentReadable"`;

/** Files of one permission INSERT. */
const PERMISSIONS_PER_INSERT = 100;

/**
 * Inserts or updates one user's permission on each existing file of `ids`, with their events; the ids it
 * touched. The files are locked against removal (an abandoned upload's sweep) until the transaction ends.
 */
async function upsertPermissions(
  sql: Sql,
  instanceId: string,
  ids: string[],
  userId: string,
  contentReadable: boolean,
  actor: Actor,
): Promise<string[]> {
  if (ids.length === 0) return [];
  const existing = (
    await sql.prepared<{ fileId: string }>(
      `SELECT "fileId" FROM "File" WHERE "instanceId" = $1::uuid AND "fileId" = ANY($2::text[]) ORDER BY "fileId" FOR KEY SHARE`,
      [instanceId, ids],
    )
  ).map((row) => row.fileId);
  if (existing.length === 0) return [];
  const statements: Statement[] = [];
  for (let start = 0; start < existing.length; start += PERMISSIONS_PER_INSERT) {
    const chunk = existing.slice(start, start + PERMISSIONS_PER_INSERT);
    statements.push(statement(upsertPermissionRows(chunk.length), [instanceId, userId, contentReadable, ...chunk]));
  }
  const events = existing.map((fileId) => ({ type: 'file.shared', object: { fileId, userId, contentReadable } }));
  await sql.batch([...statements, ...eventStatements(instanceId, events, actor)]);
  return existing;
}

/** Removes one user's permission on each file of `ids` (a user id that is no uuid holds none), with their events. */
async function deletePermissions(sql: Sql, instanceId: string, ids: string[], userId: string, actor: Actor): Promise<void> {
  if (ids.length === 0 || !isUuid(userId)) return;
  const removed = await sql.prepared<{ fileId: string }>(
    `DELETE FROM "FilePermission" WHERE "instanceId" = $1::uuid AND "fileId" = ANY($2::text[]) AND "userId" = $3::uuid RETURNING "fileId"`,
    [instanceId, ids, userId],
  );
  await writeEvents(
    sql,
    instanceId,
    removed.map(({ fileId }) => ({ type: 'file.unshared', object: { fileId, userId } })),
    actor,
  );
}

/** The ids of the files matching the template, newest lastUpdated first (bulk grants, in their transaction). */
async function matchingIds(sql: Sql, instanceId: string, template: FileTemplate, scope: FileScope): Promise<string[]> {
  const { where, values } = searchConditions(instanceId, template, scope);
  const text = `SELECT f."fileId" FROM "File" f WHERE ${where.join(' AND ')} ORDER BY f."lastUpdated" DESC, f."fileId"`;
  return (await sql.plain<{ fileId: string }>(text, values)).map((row) => row.fileId);
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
      WHERE sp."instanceId" = $1::uuid AND sp."fileId" = f."fileId" AND sp."userId" = $${values.push(scope.userId)}::uuid)`,
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
      JOIN "User" ou ON ou."instanceId" = $1::uuid AND ou."id" = op."userId"
      WHERE op."instanceId" = $1::uuid AND op."fileId" = f."fileId" AND ou."kind" <> 'owner')`);
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
