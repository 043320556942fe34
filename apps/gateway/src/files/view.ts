// The file record as clients see it (CONTRACT §2): ISO dates with milliseconds, optional fields
// omitted rather than null, status as an object with the size once Completed.
import type { FileListing, FileRecord } from '@pds/db';

export interface FileJson {
  fileId: string;
  name: string;
  source: string;
  tags: string[];
  title?: string;
  description?: string;
  dateCreated: string;
  lastUpdated: string;
  status: { status: string; size?: number };
  contentUrl?: string;
  /** Signed GET address of a small picture of the content, when one is stored and the content is readable. */
  thumbnailUrl?: string;
  contentPublic: boolean;
  permissions?: { userId: string; contentReadable: boolean }[];
}

const iso = (date: Date | string) => (typeof date === 'string' ? date : date.toISOString());
/** A search's row: its permission entries are already exactly the client's. */
const isListing = (file: FileRecord | FileListing): file is FileListing => typeof file.dateCreated === 'string';
const entry = (p: { userId: string; contentReadable: boolean }) => ({ userId: p.userId, contentReadable: p.contentReadable });

/**
 * One file as the caller sees it, from a full row or from the narrower row a search reads (whose
 * dates are already ISO text and whose permission entries already have the client's shape). Built
 * field by field rather than with conditional spreads: a search renders up to 10,000 of these, and
 * each spread allocates an object. The key order is the order clients see.
 */
export function fileView(
  file: FileRecord | FileListing,
  options: { permissions: boolean; contentUrl?: string; thumbnailUrl?: string },
): FileJson {
  const json: FileJson = { fileId: file.fileId, name: file.name, source: file.source, tags: file.tags } as FileJson;
  if (file.title !== null) json.title = file.title;
  if (file.description !== null) json.description = file.description;
  json.dateCreated = iso(file.dateCreated);
  json.lastUpdated = iso(file.lastUpdated);
  json.status = file.status === 'Completed' ? { status: file.status, size: Number(file.size ?? 0) } : { status: file.status };
  if (options.contentUrl) json.contentUrl = options.contentUrl;
  if (options.thumbnailUrl) json.thumbnailUrl = options.thumbnailUrl;
  json.contentPublic = file.contentPublic;
  if (options.permissions) json.permissions = isListing(file) ? file.permissions : file.permissions.map(entry);
  return json;
}
