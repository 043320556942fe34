// Share links and the files they name. Every method takes the instance id first, so a link can only
// ever name files of its own instance. A link's use reads its row each time (nothing is cached): a
// revocation holds on every gateway from the next request. Its events are written in the change's
// transaction, sent with its COMMIT (outbox.ts); its uses are reads, batched by the gateway's read log.
import type { GatewayDb } from './clients';
import { commitWithEvents, type Actor } from './outbox';
import { ReadRouting } from './replica';
import { isUuid, pageClause, sqlOn, type Sql } from './sql';

export interface NewShareLink {
  id: string;
  /** SHA-256 of the token, hex. */
  tokenHash: string;
  passwordHash: string | null;
  expiresAt: Date | null;
  downloadLimit: number | null;
  allowDownload: boolean;
  createdAt: Date;
}

/** A link as its owner sees it: never its token or password hash. */
export interface ShareLinkRecord {
  id: string;
  /** The files it names, in the owner's order, whatever their state now. */
  fileIds: string[];
  hasPassword: boolean;
  expiresAt: Date | null;
  downloadLimit: number | null;
  downloads: number;
  views: number;
  lastUsedAt: Date | null;
  allowDownload: boolean;
  createdAt: Date;
  revokedAt: Date | null;
}

/** A file a link still serves: Completed (not in the trash, not deleted). */
export interface SharedFile {
  fileId: string;
  name: string;
  size: number;
  lastUpdated: string;
}

/** What a use of a link reads: the link's rules, and its files that are still served, in order. */
export interface LinkInUse {
  id: string;
  passwordHash: string | null;
  expiresAt: Date | null;
  downloadLimit: number | null;
  downloads: number;
  allowDownload: boolean;
  revokedAt: Date | null;
  files: SharedFile[];
}

/** What a link's events say of it: its first file (by id and name, for the owner's activity log) and how many it names. */
interface LinkSummary {
  fileId: string;
  name: string;
  files: number;
}

const LINK_COLUMNS = `l."id", l."passwordHash" IS NOT NULL AS "hasPassword", l."expiresAt", l."downloadLimit", l."downloads", l."views",
  l."lastUsedAt", l."allowDownload", l."createdAt", l."revokedAt",
  ARRAY(SELECT lf."fileId" FROM "ShareLinkFile" lf WHERE lf."instanceId" = $1::uuid AND lf."linkId" = l."id" ORDER BY lf."position") AS "fileIds"`;

const LINK_BY_ID = `SELECT ${LINK_COLUMNS} FROM "ShareLink" l WHERE l."instanceId" = $1::uuid AND l."id" = $2::uuid`;

/**
 * The instance's links, or with NAMING_FILE those that name the file $2, before their page (pageClause).
 * Two texts rather than `$2 IS NULL OR …`: PostgreSQL folds that for a custom plan only, so its generic
 * plan looked dearer and the statement was planned again on every execution.
 */
const LINKS = (filter: string) => `SELECT ${LINK_COLUMNS} FROM "ShareLink" l WHERE l."instanceId" = $1::uuid${filter}
  ORDER BY l."createdAt" DESC, l."id"`;
const ALL_LINKS = LINKS('');
const LINKS_NAMING_FILE = LINKS(
  ` AND EXISTS (SELECT 1 FROM "ShareLinkFile" x WHERE x."instanceId" = $1::uuid AND x."linkId" = l."id" AND x."fileId" = $2)`,
);

/** The link of a token hash, with the files it still serves (Completed ones only), in the owner's order. */
const LINK_IN_USE = `SELECT l."id", l."passwordHash", l."expiresAt", l."downloadLimit", l."downloads", l."allowDownload", l."revokedAt",
  COALESCE((SELECT json_agg(json_build_object('fileId', f."fileId", 'name', f."name", 'size', f."size",
      'lastUpdated', to_char(f."lastUpdated" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) ORDER BY lf."position")
    FROM "ShareLinkFile" lf JOIN "File" f ON f."instanceId" = $1::uuid AND f."fileId" = lf."fileId"
    WHERE lf."instanceId" = $1::uuid AND lf."linkId" = l."id" AND f."status" = 'Completed'), '[]'::json) AS "files"
  FROM "ShareLink" l WHERE l."instanceId" = $1::uuid AND l."tokenHash" = $2`;

/**
 * One download, counted only while the link may still give one: not revoked, not expired at $3, under
 * its limit. The row lock makes concurrent downloads take turns, and each re-reads "downloads" after the
 * one before it committed, so a limit of N gives exactly N however many ask at once.
 */
const COUNT_DOWNLOAD = `UPDATE "ShareLink" SET "downloads" = "downloads" + 1, "lastUsedAt" = $3::timestamptz
  WHERE "instanceId" = $1::uuid AND "id" = $2::uuid AND "revokedAt" IS NULL
    AND ("expiresAt" IS NULL OR "expiresAt" > $3::timestamptz)
    AND ("downloadLimit" IS NULL OR "downloads" < "downloadLimit")`;

const COUNT_VIEW = `UPDATE "ShareLink" SET "views" = "views" + 1, "lastUsedAt" = $3::timestamptz
  WHERE "instanceId" = $1::uuid AND "id" = $2::uuid AND "revokedAt" IS NULL`;

const INSERT_LINK = `INSERT INTO "ShareLink" ("instanceId", "id", "tokenHash", "passwordHash", "expiresAt", "downloadLimit", "allowDownload", "createdAt")
  VALUES ($1::uuid, $2::uuid, $3, $4, $5::timestamptz, $6, $7, $8::timestamptz)`;

/** The files of $3 (in that order) that are Completed now; a file trashed meanwhile is left out. */
const INSERT_FILES = `INSERT INTO "ShareLinkFile" ("instanceId", "linkId", "fileId", "position")
  SELECT f."instanceId", $2::uuid, f."fileId", s."position"
  FROM unnest($3::text[]) WITH ORDINALITY AS s("fileId", "position")
  JOIN "File" f ON f."instanceId" = $1::uuid AND f."fileId" = s."fileId"
  WHERE f."status" = 'Completed'`;

const SUMMARY = `SELECT lf."fileId", f."name",
    (SELECT count(*)::int FROM "ShareLinkFile" c WHERE c."instanceId" = $1::uuid AND c."linkId" = $2::uuid) AS "files"
  FROM "ShareLinkFile" lf JOIN "File" f ON f."instanceId" = lf."instanceId" AND f."fileId" = lf."fileId"
  WHERE lf."instanceId" = $1::uuid AND lf."linkId" = $2::uuid ORDER BY lf."position" LIMIT 1`;

const REVOKE = `UPDATE "ShareLink" SET "revokedAt" = $3::timestamptz WHERE "instanceId" = $1::uuid AND "id" = $2::uuid AND "revokedAt" IS NULL`;

export class ShareLinkRepository {
  private readonly sql: Sql;

  constructor(
    db: GatewayDb,
    private readonly reads = new ReadRouting(db),
  ) {
    this.sql = sqlOn(db.pool);
  }

  /**
   * Writes the link naming those of `fileIds` that are Completed, with its `link.created` event, in one
   * transaction; null (nothing written) when none is.
   */
  create(instanceId: string, link: NewShareLink, fileIds: string[], actor: Actor): Promise<ShareLinkRecord | null> {
    return this.reads
      .transaction(instanceId, async (tx) => {
        await tx.prepared(INSERT_LINK, [
          instanceId,
          link.id,
          link.tokenHash,
          link.passwordHash,
          link.expiresAt,
          link.downloadLimit,
          link.allowDownload,
          link.createdAt,
        ]);
        if ((await tx.count(INSERT_FILES, [instanceId, link.id, fileIds])) === 0) {
          // Nothing to share: undo the link row with the transaction.
          throw new NothingToShare();
        }
        const made = await findIn(tx, instanceId, link.id);
        await commitWithEvents(tx, instanceId, [{ type: 'link.created', object: await eventObject(tx, instanceId, link.id) }], actor);
        return made;
      })
      .catch((error: unknown) => {
        if (error instanceof NothingToShare) return null;
        throw error;
      });
  }

  /** The instance's links, newest first; with `fileId`, only those naming that file. */
  list(instanceId: string, fileId: string | undefined, page: { take: number; skip: number }): Promise<ShareLinkRecord[]> {
    const values: unknown[] = fileId === undefined ? [instanceId] : [instanceId, fileId];
    const links = fileId === undefined ? ALL_LINKS : LINKS_NAMING_FILE;
    return this.sql.prepared<ShareLinkRecord>(`${links} ${pageClause(values, page)}`, values);
  }

  find(instanceId: string, id: string): Promise<ShareLinkRecord | null> {
    return findIn(this.sql, instanceId, id);
  }

  /** The link a token hash names, with the files it still serves; null for none. */
  async inUse(instanceId: string, tokenHash: string): Promise<LinkInUse | null> {
    const [row] = await this.sql.prepared<LinkInUse>(LINK_IN_USE, [instanceId, tokenHash]);
    return row ?? null;
  }

  /** Counts one download if the link still gives one at `now` (see COUNT_DOWNLOAD); false when it does not. */
  async countDownload(instanceId: string, id: string, now: Date): Promise<boolean> {
    return (await this.sql.count(COUNT_DOWNLOAD, [instanceId, id, now])) > 0;
  }

  async countView(instanceId: string, id: string, now: Date): Promise<void> {
    await this.sql.count(COUNT_VIEW, [instanceId, id, now]);
  }

  /**
   * Revokes the link, with its `link.revoked` event, in one transaction; a link revoked already stays
   * as it was (no second event). The link as it is now, or null when there is none.
   */
  revoke(instanceId: string, id: string, now: Date, actor: Actor): Promise<ShareLinkRecord | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return this.reads.transaction(instanceId, async (tx) => {
      const revoked = (await tx.count(REVOKE, [instanceId, id, now])) > 0;
      const link = await findIn(tx, instanceId, id);
      if (revoked) await commitWithEvents(tx, instanceId, [{ type: 'link.revoked', object: await eventObject(tx, instanceId, id) }], actor);
      return link;
    });
  }
}

class NothingToShare extends Error {}

async function findIn(sql: Sql, instanceId: string, id: string): Promise<ShareLinkRecord | null> {
  if (!isUuid(id)) return null;
  const [row] = await sql.prepared<ShareLinkRecord>(LINK_BY_ID, [instanceId, id]);
  return row ?? null;
}

/** `{ linkId, fileId, name, files }`: the owner's log reads "your link to tax.pdf (and 2 more files)". */
async function eventObject(tx: Sql, instanceId: string, linkId: string): Promise<Record<string, unknown>> {
  const [summary] = await tx.prepared<LinkSummary>(SUMMARY, [instanceId, linkId]);
  return { linkId, ...summary };
}
