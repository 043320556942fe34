// What the Files API accepts (CONTRACT §0 field limits, §2 bodies). Unknown fields, and fields the
// server decides (fileId, status, contentPublic, permissions on upload), are dropped.
import { z } from 'zod';
import { FILE_KINDS } from '@pds/console/kinds';

const MAX_TAKE = 10_000;
// JS dates reach ±8.64e15 ms; Postgres timestamps and ISO output need years 0001–9999.
// Not Date.UTC(1, 0, 1): Date.UTC reads years 0–99 as 1900–1999.
const MIN_DATE_MS = Date.parse('0001-01-01T00:00:00Z');
const MAX_DATE_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const limited = (max: number) => z.string().max(max, `must be at most ${max} characters`);

/** ISO 8601 strings, or Unix time: a number below 10^11 is seconds, otherwise milliseconds. */
export const dateInput = z.union([z.number(), z.string().max(64)]).transform((value, ctx) => {
  const ms = typeof value === 'number' ? (Math.abs(value) < 1e11 ? value * 1000 : value) : isoMs(value);
  if (ms === null || !Number.isFinite(ms) || ms < MIN_DATE_MS || ms > MAX_DATE_MS) {
    ctx.addIssue({ code: 'custom', message: 'must be an ISO 8601 date or a Unix timestamp (seconds or milliseconds)' });
    return z.NEVER;
  }
  return new Date(Math.trunc(ms));
});

function isoMs(text: string): number | null {
  return /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/i.test(text) ? Date.parse(text) : null;
}

const tags = z.array(limited(128)).max(64, 'must hold at most 64 tags');

/** Optional fields may come as null from clients that serialise empty values; null means absent. */
export const uploadSchema = z
  .object({
    name: limited(1024).min(1, 'is required'),
    source: limited(256).min(1, 'is required'),
    tags: tags.nullish(),
    title: limited(1024).nullish(),
    description: limited(16 * 1024).nullish(),
    dateCreated: dateInput.nullish(),
    // Validated for compatibility, then ignored: an upload is itself a change, so lastUpdated is now.
    lastUpdated: dateInput.nullish(),
  })
  .transform((u) => ({
    name: u.name,
    source: u.source,
    tags: u.tags ?? undefined,
    title: u.title ?? undefined,
    description: u.description ?? undefined,
    dateCreated: u.dateCreated ?? undefined,
  }));

/**
 * PUT /files/file/:fileId: the metadata as hat-js sends it (its FileMetadataReq). Name, tags, title
 * and description replace the stored ones (absent ones clear them, as the original); the rest is ignored.
 */
export const metadataSchema = z
  .object({
    name: limited(1024).min(1, 'is required'),
    tags: tags.nullish(),
    title: limited(1024).nullish(),
    description: limited(16 * 1024).nullish(),
  })
  .transform((m) => ({ name: m.name, tags: m.tags ?? [], title: m.title ?? null, description: m.description ?? null }));

/** A file template (search, bulk grants): "" and null mean "any" (CONTRACT §2). */
export const templateSchema = z
  .object({
    fileId: limited(2048).nullish(),
    name: limited(1024).nullish(),
    source: limited(256).nullish(),
    tags: tags.nullish(),
    title: limited(1024).nullish(),
    description: limited(16 * 1024).nullish(),
    status: z.object({ status: z.enum(['New', 'Completed', 'Deleted']), size: z.number().optional() }).nullish(),
  })
  .transform((t) => ({
    fileId: t.fileId ?? undefined,
    name: t.name ?? undefined,
    source: t.source ?? undefined,
    tags: t.tags ?? undefined,
    title: t.title ?? undefined,
    description: t.description ?? undefined,
    status: t.status?.status,
  }));

const queryBool = z.enum(['true', 'false']).transform((v) => v === 'true');

export const contentQuery = z.object({ content: queryBool.default(false) });

export const pageQuery = z.object({
  take: z.coerce.number().int().min(1).max(MAX_TAKE, `must be at most ${MAX_TAKE}`).default(1000),
  skip: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
});

/** A query parameter that may come empty from a form: '' is the same as absent. */
const optionalParam = <S extends z.ZodType>(schema: S) => z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

export const LISTING_MAX_TAKE = 200;

/** GET /files/listing: one page of one state's files, filtered and sorted. */
export const listingQuery = z
  .object({
    status: optionalParam(z.enum(['Completed', 'New'])),
    q: optionalParam(limited(256)),
    type: optionalParam(z.enum(FILE_KINDS)),
    tag: optionalParam(limited(128)),
    shared: optionalParam(queryBool),
    public: optionalParam(queryBool),
    sort: optionalParam(z.enum(['name', 'date', 'size'])),
    order: optionalParam(z.enum(['asc', 'desc'])),
    take: z.coerce.number().int().min(1).max(LISTING_MAX_TAKE, `must be at most ${LISTING_MAX_TAKE}`).default(50),
    skip: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
  })
  .transform((q) => {
    const sort = q.sort ?? 'date';
    // Names A–Z, the newest and the largest first, unless asked otherwise.
    return { ...q, status: q.status ?? 'Completed', sort, descending: (q.order ?? (sort === 'name' ? 'asc' : 'desc')) === 'desc' };
  });

export type ListingInput = z.output<typeof listingQuery>;

/** The most files one bulk call or one zip download names. */
export const MAX_SELECTION = 1000;

/** fileIds of a bulk call, a zip or a share link: 1 to MAX_SELECTION of them, each once. */
export const fileSelection = z
  .array(limited(2048))
  .min(1, 'must name at least one file')
  .max(MAX_SELECTION, `must name at most ${MAX_SELECTION} files`)
  .transform((ids) => [...new Set(ids)]);

/** POST /files/archive. */
export const archiveSchema = z.object({ fileIds: fileSelection });

export const BULK_ACTIONS = ['delete', 'share', 'unshare', 'public', 'private'] as const;

/** POST /files/bulk: `userId` is required to share or unshare; `content` lets a share read the bytes too. */
export const bulkSchema = z
  .object({
    fileIds: fileSelection,
    action: z.enum(BULK_ACTIONS),
    userId: z.string().max(64).optional(),
    content: z.boolean().default(false),
  })
  .superRefine((b, ctx) => {
    if ((b.action === 'share' || b.action === 'unshare') && !b.userId) {
      ctx.addIssue({ code: 'custom', path: ['userId'], message: `is required to ${b.action}` });
    }
  });

export type BulkInput = z.output<typeof bulkSchema>;

export const PHOTOS_MAX_TAKE = 500;

/**
 * Where a page of the photo timeline starts, as clients carry it: the base64url JSON of the last
 * picture's [takenAt, fileId]. Opaque to clients; anything else is a 400.
 */
const photoCursor = z
  .string()
  .max(4096)
  .transform((text, ctx) => {
    try {
      const [date, fileId] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown[];
      const takenAt = typeof date === 'string' ? new Date(date) : undefined;
      if (takenAt && !Number.isNaN(takenAt.getTime()) && typeof fileId === 'string' && fileId.length <= 2048) {
        return { takenAt, fileId };
      }
    } catch {
      // Falls through to the issue below.
    }
    ctx.addIssue({ code: 'custom', message: 'must be the `next` of an earlier page' });
    return z.NEVER;
  });

export const encodePhotoCursor = (photo: { takenAt: string; fileId: string }): string =>
  Buffer.from(JSON.stringify([photo.takenAt, photo.fileId])).toString('base64url');

/** GET /files/photos: a page of the photo timeline, after the cursor of the page before. */
export const photosQuery = z.object({
  cursor: optionalParam(photoCursor),
  take: z.coerce.number().int().min(1).max(PHOTOS_MAX_TAKE, `must be at most ${PHOTOS_MAX_TAKE}`).default(100),
});

export type PhotosInput = z.output<typeof photosQuery>;
