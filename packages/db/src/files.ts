// Files and their permissions. Every method takes the instance id first, so no query can reach another
// instance's files; the one exception is `abandonedUploads`, the worker's sweep across instances.
import type { GatewayDb } from './clients';
import { Prisma, type File, type FilePermission, type FileStatus } from './generated/gateway/client';

export type { File, FilePermission, FileStatus };
export type FileRecord = File & { permissions: FilePermission[] };

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

export interface AbandonedUpload {
  instanceId: string;
  address: string;
  fileId: string;
}

type Db = GatewayDb | Prisma.TransactionClient;
const withPermissions = { permissions: { orderBy: { userId: 'asc' } } } as const;

/** What PUT /files/file/:fileId replaces: absent title or description clear it. */
export interface FileMetadata {
  name: string;
  tags: string[];
  title: string | null;
  description: string | null;
}

export class FileRepository {
  constructor(private readonly db: GatewayDb) {}

  /**
   * Allocates the file's id and writes the row (New) and the uploader's permission in one transaction.
   * The id comes from a per-(instance, base, ext) counter bumped by INSERT … ON CONFLICT DO UPDATE …
   * RETURNING: the row lock serialises concurrent uploads of one name until commit, so each gets its
   * own number, and a rolled-back upload gives its number back. Counters are never lowered, so an id is
   * never reused (a still-valid signed address of a swept upload cannot write into a newer file).
   */
  create(instanceId: string, stem: FileIdStem, file: NewFile): Promise<FileRecord> {
    return this.db.$transaction(async (tx) => {
      const [counter] = await tx.$queryRaw<{ last: number }[]>`
        INSERT INTO "FileIdCounter" ("instanceId", "base", "ext", "last")
        VALUES (${instanceId}::uuid, ${stem.base}, ${stem.ext}, 0)
        ON CONFLICT ("instanceId", "base", "ext") DO UPDATE SET "last" = "FileIdCounter"."last" + 1
        RETURNING "last"`;
      const n = counter?.last ?? 0;
      const fileId = n === 0 ? `${stem.base}${stem.ext}` : `${stem.base}-${n}${stem.ext}`;
      return tx.file.create({
        data: {
          instanceId,
          fileId,
          name: file.name,
          source: file.source,
          tags: file.tags,
          title: file.title,
          description: file.description,
          uploaderId: file.uploaderId,
          dateCreated: file.dateCreated,
          lastUpdated: file.now,
          createdAt: file.now,
          permissions: { create: { userId: file.uploaderId, contentReadable: true } },
        },
        include: withPermissions,
      });
    });
  }

  find(instanceId: string, fileId: string): Promise<FileRecord | null> {
    return this.db.file.findUnique({ where: { instanceId_fileId: { instanceId, fileId } }, include: withPermissions });
  }

  /** Moves a New or Completed file to Completed with this size; null when it is missing or Deleted. */
  complete(instanceId: string, fileId: string, size: number, now: Date): Promise<FileRecord | null> {
    return this.updateWhere(instanceId, fileId, { status: { not: 'Deleted' } }, { status: 'Completed', size, lastUpdated: now });
  }

  markDeleted(instanceId: string, fileId: string, now: Date): Promise<FileRecord | null> {
    return this.updateWhere(instanceId, fileId, {}, { status: 'Deleted', lastUpdated: now });
  }

  setPublic(instanceId: string, fileId: string, contentPublic: boolean, now: Date): Promise<FileRecord | null> {
    return this.updateWhere(instanceId, fileId, {}, { contentPublic, lastUpdated: now });
  }

  /** Replaces the descriptive metadata (the fileId stays); null when the file is missing. */
  updateMetadata(instanceId: string, fileId: string, metadata: FileMetadata, now: Date): Promise<FileRecord | null> {
    return this.updateWhere(instanceId, fileId, {}, { ...metadata, lastUpdated: now });
  }

  /** Grants (or changes) one user's permission on one file; null when the file is missing. */
  async grant(instanceId: string, fileId: string, userId: string, contentReadable: boolean): Promise<FileRecord | null> {
    return this.db.$transaction(async (tx) => {
      const ids = await upsertPermissions(tx, instanceId, [fileId], userId, contentReadable);
      return ids.length === 0 ? null : findIn(tx, instanceId, fileId);
    });
  }

  /** Removes one user's permission; the updated file, or null when there is no such file. */
  revoke(instanceId: string, fileId: string, userId: string): Promise<FileRecord | null> {
    return this.db.$transaction(async (tx) => {
      await tx.filePermission.deleteMany({ where: { instanceId, fileId, userId } });
      return findIn(tx, instanceId, fileId);
    });
  }

  /** Grants one user a permission on every file matching the template, in one transaction. */
  grantMatching(instanceId: string, template: FileTemplate, userId: string, contentReadable: boolean): Promise<FileRecord[]> {
    return this.db.$transaction(async (tx) => {
      const ids = await matchingIds(tx, instanceId, template, { all: true });
      await upsertPermissions(tx, instanceId, ids, userId, contentReadable);
      return findAllIn(tx, instanceId, ids);
    });
  }

  /** Removes one user's permissions on every file matching the template, in one transaction. */
  revokeMatching(instanceId: string, template: FileTemplate, userId: string): Promise<FileRecord[]> {
    return this.db.$transaction(async (tx) => {
      const ids = await matchingIds(tx, instanceId, template, { all: true });
      await tx.filePermission.deleteMany({ where: { instanceId, userId, fileId: { in: ids } } });
      return findAllIn(tx, instanceId, ids);
    });
  }

  /** Files matching the template within the scope, newest lastUpdated first. */
  async search(instanceId: string, template: FileTemplate, scope: FileScope, page: Page): Promise<FileRecord[]> {
    return findAllIn(this.db, instanceId, await matchingIds(this.db, instanceId, template, scope, page));
  }

  /** Uploads still New that were started before `createdBefore`, across all instances, oldest first. */
  abandonedUploads(createdBefore: Date, limit: number): Promise<AbandonedUpload[]> {
    return this.db.$queryRaw<AbandonedUpload[]>`
      SELECT f."instanceId"::text AS "instanceId", i."address", f."fileId"
      FROM "File" f JOIN "Instance" i ON i."id" = f."instanceId"
      WHERE f."status" = 'New' AND f."createdAt" < ${createdBefore}
      ORDER BY f."createdAt" LIMIT ${limit}`;
  }

  /**
   * Deletes an abandoned upload (row and permissions) if it is still New and old enough. The row stays
   * locked while `removeBytes` runs, so a concurrent completion waits and then finds no file; if
   * removing the bytes fails, the row stays for the next sweep. True when the file was removed.
   */
  removeAbandoned(instanceId: string, fileId: string, createdBefore: Date, removeBytes: () => Promise<void>): Promise<boolean> {
    return this.db.$transaction(
      async (tx) => {
        const locked = await tx.$queryRaw<unknown[]>`
          SELECT 1 FROM "File"
          WHERE "instanceId" = ${instanceId}::uuid AND "fileId" = ${fileId} AND "status" = 'New' AND "createdAt" < ${createdBefore}
          FOR UPDATE`;
        if (locked.length === 0) return false;
        await removeBytes();
        await tx.file.delete({ where: { instanceId_fileId: { instanceId, fileId } } });
        return true;
      },
      { timeout: 60_000 },
    );
  }

  private async updateWhere(
    instanceId: string,
    fileId: string,
    condition: Prisma.FileWhereInput,
    data: Prisma.FileUpdateManyMutationInput,
  ): Promise<FileRecord | null> {
    const { count } = await this.db.file.updateMany({ where: { ...condition, instanceId, fileId }, data });
    return count === 0 ? null : this.find(instanceId, fileId);
  }
}

function findIn(db: Db, instanceId: string, fileId: string): Promise<FileRecord | null> {
  return db.file.findUnique({ where: { instanceId_fileId: { instanceId, fileId } }, include: withPermissions });
}

/** The records of these ids, in the order given. */
async function findAllIn(db: Db, instanceId: string, ids: string[]): Promise<FileRecord[]> {
  if (ids.length === 0) return [];
  const rows = await db.file.findMany({ where: { instanceId, fileId: { in: ids } }, include: withPermissions });
  const byId = new Map(rows.map((row) => [row.fileId, row]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** Inserts or updates one user's permission on each existing file of `ids`; the ids it touched. */
async function upsertPermissions(db: Db, instanceId: string, ids: string[], userId: string, contentReadable: boolean): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db.$queryRaw<{ fileId: string }[]>`
    INSERT INTO "FilePermission" ("instanceId", "fileId", "userId", "contentReadable")
    SELECT f."instanceId", f."fileId", ${userId}::uuid, ${contentReadable}
    FROM "File" f WHERE f."instanceId" = ${instanceId}::uuid AND f."fileId" = ANY(${ids}::text[])
    ON CONFLICT ("instanceId", "fileId", "userId") DO UPDATE SET "contentReadable" = EXCLUDED."contentReadable"
    RETURNING "fileId"`;
  return rows.map((row) => row.fileId);
}

async function matchingIds(db: Db, instanceId: string, template: FileTemplate, scope: FileScope, page?: Page): Promise<string[]> {
  const paging = page ? Prisma.sql`LIMIT ${page.take} OFFSET ${page.skip}` : Prisma.empty;
  const rows = await db.$queryRaw<{ fileId: string }[]>`
    SELECT f."fileId" FROM "File" f
    WHERE ${Prisma.join(conditions(instanceId, template, scope), ' AND ')}
    ORDER BY f."lastUpdated" DESC, f."fileId"
    ${paging}`;
  return rows.map((row) => row.fileId);
}

/** The WHERE conditions of a template search; every value is a bound parameter. */
function conditions(instanceId: string, t: FileTemplate, scope: FileScope): Prisma.Sql[] {
  const where = [Prisma.sql`f."instanceId" = ${instanceId}::uuid`];
  if (t.fileId) where.push(Prisma.sql`f."fileId" = ${t.fileId}`);
  if (t.name) where.push(Prisma.sql`f."name" = ${t.name}`);
  if (t.source) where.push(Prisma.sql`f."source" = ${t.source}`);
  if (t.tags && t.tags.length > 0) where.push(Prisma.sql`f."tags" @> ${t.tags}::text[]`);
  // These expressions must match the GIN indexes of the files_search migration.
  const title = prefixQuery(t.title);
  if (title) where.push(Prisma.sql`to_tsvector('simple'::regconfig, coalesce(f."title", '')) @@ to_tsquery('simple'::regconfig, ${title})`);
  const description = prefixQuery(t.description);
  if (description) {
    where.push(Prisma.sql`to_tsvector('simple'::regconfig, coalesce(f."description", '')) @@ to_tsquery('simple'::regconfig, ${description})`);
  }
  // Deleted files are history: they show only when asked for.
  where.push(t.status ? Prisma.sql`f."status" = ${t.status}::"FileStatus"` : Prisma.sql`f."status" <> 'Deleted'`);
  if ('userId' in scope) {
    where.push(Prisma.sql`EXISTS (SELECT 1 FROM "FilePermission" p
      WHERE p."instanceId" = f."instanceId" AND p."fileId" = f."fileId" AND p."userId" = ${scope.userId}::uuid)`);
  }
  return where;
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
