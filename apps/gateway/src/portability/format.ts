// The export archive, version 3 (docs/export-format.md): which entries it holds, in which order, and the
// shape of each. The writer and the reader both hold to these schemas, so an archive this product writes
// is one it reads; docs/export-manifest.schema.json is generated from `manifestSchema`.
import { z } from 'zod';

export const FORMAT = 'pds-export';
/** The version this product writes. */
export const VERSION = 3;
/**
 * The versions it reads. Version 2 added the activity section, version 3 the share links (and the
 * anonymous actor of their uses): a reader of an older version refuses their paths (the grammar is
 * closed), so the archive says the newer version; an older archive reads as a newer one without them.
 */
export const READABLE_VERSIONS = [1, 2, 3] as const;
export type Version = (typeof READABLE_VERSIONS)[number];
export const isReadableVersion = (version: unknown): version is Version => READABLE_VERSIONS.includes(version as Version);

/** The first entry: what the archive is, so a reader refuses a version it does not know before anything else. */
export const MARKER_PATH = 'pds-export.json';
/** The last entry: known only once every other entry has been written and hashed. */
export const MANIFEST_PATH = 'manifest.json';

/** The NDJSON sections, in archive order; files come between debits and links. */
export const PART_SECTIONS = ['users', 'apps', 'bundles', 'combinators', 'debits', 'links', 'records', 'activity'] as const;

/** The first version that has each section (the others are in every version). */
export const SECTION_SINCE: Partial<Record<PartSection, Version>> = { activity: 2, links: 3 };
export type PartSection = (typeof PART_SECTIONS)[number];

/** Entry numbers have this many digits: names sort in archive order, and stay far below tar's 100-byte name field. */
const DIGITS = 8;
export const MAX_ENTRY_NUMBER = 10 ** DIGITS - 1;
const numbered = (n: number) => String(n).padStart(DIGITS, '0');

export const partPath = (section: PartSection, n: number) => `${section}/${numbered(n)}.ndjson`;
export const fileMetadataPath = (n: number) => `files/${numbered(n)}.json`;
export const fileContentPath = (n: number) => `files/${numbered(n)}.bin`;

export type EntryName =
  | { kind: 'marker' }
  | { kind: 'manifest' }
  | { kind: 'part'; section: PartSection; n: number }
  | { kind: 'file-metadata'; n: number }
  | { kind: 'file-content'; n: number };

const PART_NAME = new RegExp(`^(${PART_SECTIONS.join('|')})/(\\d{${DIGITS}})\\.ndjson$`);
const FILE_NAME = new RegExp(`^files/(\\d{${DIGITS}})\\.(json|bin)$`);

/**
 * What an entry path names, or null for any other path. Paths carry no user data (ids are inside the
 * entries), so this closed grammar is the whole check: no `..`, no absolute path, nothing to escape.
 */
export function parseEntryPath(path: string): EntryName | null {
  if (path === MARKER_PATH) return { kind: 'marker' };
  if (path === MANIFEST_PATH) return { kind: 'manifest' };
  const part = PART_NAME.exec(path);
  if (part) return { kind: 'part', section: part[1] as PartSection, n: Number(part[2]) };
  const file = FILE_NAME.exec(path);
  if (file) return { kind: file[2] === 'json' ? 'file-metadata' : 'file-content', n: Number(file[1]) };
  return null;
}

// Every object is strict: a field the format does not define (a password hash, a key) is refused, by the
// writer as well as the reader.
const date = z.iso.datetime().describe('ISO 8601, UTC (`2026-11-21T10:00:00.000Z`)');
const username = z.string().min(1);
const count = z.number().int().nonnegative();

export const markerSchema = z.strictObject({ format: z.literal(FORMAT), version: z.number().int().positive() });

const grantSchema = z.strictObject({
  namespace: z.string().min(1),
  endpoint: z.string().min(1).describe('`*` for the whole namespace'),
  access: z.enum(['read', 'write']),
});

export const userSchema = z.strictObject({
  username,
  email: z.string().optional(),
  fullName: z.string().optional(),
  kind: z.enum(['owner', 'user', 'application']),
  state: z.enum(['active', 'disabled']),
  createdAt: date,
  grants: z.array(grantSchema).optional().describe('What the account may read or write in the data tables'),
});

export const appSchema = z.strictObject({
  appId: z.string().min(1),
  record: z.record(z.string(), z.unknown()).describe('The app record as dex last pushed it'),
  version: count,
  setup: z.boolean(),
  enabled: z.boolean(),
  setupVersion: count.optional(),
  account: username.optional().describe("Username of the app's own account"),
});

export const bundleSchema = z.strictObject({
  name: z.string().min(1),
  query: z.record(z.string(), z.unknown()),
  createdAt: date,
});

export const combinatorSchema = z.strictObject({
  name: z.string().min(1),
  query: z.array(z.record(z.string(), z.unknown())).describe('The endpoint queries of the saved search, as the owner stored them'),
  createdAt: date,
});

const debitTermsSchema = z.strictObject({
  createdAt: date,
  purpose: z.string(),
  start: date,
  period: count.describe('Seconds'),
  cancelAtPeriodEnd: z.boolean(),
  termsUrl: z.string(),
  bundleName: z.string().min(1),
  accepted: z.boolean(),
  canceledAt: date.optional(),
});

export const debitSchema = z.strictObject({
  key: z.string().min(1),
  requestClientName: z.string(),
  requestClientUrl: z.string(),
  requestClientLogoUrl: z.string(),
  requestApplicationId: z.string().optional(),
  requestDescription: z.string().optional(),
  holder: username.optional(),
  createdAt: date,
  permissions: z.array(debitTermsSchema),
});

export const fileSchema = z
  .strictObject({
    fileId: z.string().min(1),
    name: z.string(),
    source: z.string(),
    tags: z.array(z.string()),
    title: z.string().optional(),
    description: z.string().optional(),
    dateCreated: date,
    lastUpdated: date,
    status: z.enum(['New', 'Completed', 'Deleted']),
    size: count.optional().describe('Completed files: the bytes of the content entry that follows'),
    contentPublic: z.boolean(),
    uploader: username.optional(),
    permissions: z.array(z.strictObject({ username, contentReadable: z.boolean() })),
  })
  .refine((file) => (file.status === 'Completed') === (file.size !== undefined), {
    message: 'size is given exactly for Completed files',
    path: ['size'],
  });

export const recordSchema = z.strictObject({
  namespace: z.string().min(1),
  endpoint: z.string().min(1),
  recordId: z.uuid(),
  data: z.unknown(),
  links: z.array(z.uuid()).describe('recordIds of the records linked with this one (each link appears on both)'),
  createdAt: date,
  writer: username.optional().describe('Username of the account that wrote the record'),
});

/** One entry of the owner's activity log, as GET /api/v2.6/activity answers it, people named by username. */
export const activitySchema = z.strictObject({
  kind: z.enum(['change', 'read']).describe('`change` from the outbox, `read` from the reads kept'),
  type: z.string().min(1).describe('`record.created`, `file.content`, `login.failed` … (docs/events.md)'),
  actor: z.strictObject({
    kind: z
      .enum(['owner', 'user', 'application', 'system', 'anonymous'])
      .describe('`anonymous`: someone without an account (a share link used)'),
    username: username.optional().describe('Absent for the system, an unknown caller, or an account since deleted'),
  }),
  object: z.record(z.string(), z.unknown()).describe('What was changed or read: { fileId }, { namespace, endpoint, recordId } …'),
  address: z.string().optional().describe('The client address of the request'),
  time: date,
  times: count.min(1).optional().describe('How many identical reads within a second the entry stands for (1 when absent)'),
});

/**
 * A share link as its owner sees it, never with its secrets: no token (nor its hash), no password (nor
 * its hash). An importer re-creates none: a link's address was given to people for the old instance.
 */
export const linkSchema = z.strictObject({
  id: z.uuid(),
  fileIds: z.array(z.string().min(1)).min(1).describe('The files it names (each in the archive), in the order given'),
  hasPassword: z.boolean(),
  expiresAt: date.optional(),
  downloadLimit: count.min(1).optional(),
  downloads: count,
  views: count,
  lastUsedAt: date.optional(),
  allowDownload: z.boolean(),
  createdAt: date,
  revokedAt: date.optional(),
});

export const entrySchema = z.strictObject({
  path: z.string().describe('Path of the entry in the archive'),
  size: count.describe('Bytes of the entry'),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .describe('SHA-256 of the bytes of the entry, lower-case hex'),
});

export const manifestSchema = z
  .strictObject({
    format: z.literal(FORMAT),
    version: z.union(READABLE_VERSIONS.map((v) => z.literal(v))),
    instance: z.string().min(1).describe('Address of the exported instance'),
    createdAt: date,
    counts: z.strictObject({
      users: count,
      apps: count,
      bundles: count,
      combinators: count.describe('Saved searches (combinators)'),
      debits: count,
      files: count,
      fileBytes: count.describe('Bytes of all file contents'),
      records: count,
      activity: count.optional().describe('Entries of the activity log: exactly from version 2'),
      links: count.optional().describe('Share links: exactly from version 3'),
    }),
    entries: z.array(entrySchema).describe(`Every entry before ${MANIFEST_PATH}, in archive order`),
  })
  .refine((manifest) => manifest.version >= 2 === (manifest.counts.activity !== undefined), {
    message: 'counts.activity is given exactly from version 2',
    path: ['counts', 'activity'],
  })
  .refine((manifest) => manifest.version >= 3 === (manifest.counts.links !== undefined), {
    message: 'counts.links is given exactly from version 3',
    path: ['counts', 'links'],
  })
  .meta({
    title: 'PDS export manifest',
    description: `The last entry (${MANIFEST_PATH}) of a PDS export archive, version ${READABLE_VERSIONS.join(' or ')}`,
  });

export type ExportUser = z.infer<typeof userSchema>;
export type ExportApp = z.infer<typeof appSchema>;
export type ExportBundle = z.infer<typeof bundleSchema>;
export type ExportCombinator = z.infer<typeof combinatorSchema>;
export type ExportDebit = z.infer<typeof debitSchema>;
export type ExportFile = z.infer<typeof fileSchema>;
export type ExportRecord = z.infer<typeof recordSchema>;
export type ExportActivity = z.infer<typeof activitySchema>;
export type ExportLink = z.infer<typeof linkSchema>;
export type ManifestEntry = z.infer<typeof entrySchema>;
export type Manifest = z.infer<typeof manifestSchema>;
export type Counts = Manifest['counts'];

/** Nothing counted yet: where an archive's writer and its reader's check start. */
export function noCounts(): Required<Counts> {
  return { users: 0, apps: 0, bundles: 0, combinators: 0, debits: 0, files: 0, fileBytes: 0, records: 0, activity: 0, links: 0 };
}

/** The schema of each NDJSON section's lines. */
export const PART_SCHEMAS = {
  users: userSchema,
  apps: appSchema,
  bundles: bundleSchema,
  combinators: combinatorSchema,
  debits: debitSchema,
  links: linkSchema,
  records: recordSchema,
  activity: activitySchema,
} as const;

/** docs/export-manifest.schema.json. */
export function manifestJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(manifestSchema, { target: 'draft-2020-12' });
}
