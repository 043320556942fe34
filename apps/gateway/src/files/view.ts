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
  contentPublic: boolean;
  permissions?: { userId: string; contentReadable: boolean }[];
}

export function fileJson(file: FileRecord, options: { permissions: boolean; contentUrl?: string }): FileJson {
  // Built field by field rather than with conditional spreads: a search renders up to 10,000 of
  // these, and each spread allocates an object. The key order is the order clients see.
  const json: FileJson = { fileId: file.fileId, name: file.name, source: file.source, tags: file.tags } as FileJson;
  if (file.title !== null) json.title = file.title;
  if (file.description !== null) json.description = file.description;
  json.dateCreated = file.dateCreated.toISOString();
  json.lastUpdated = file.lastUpdated.toISOString();
  json.status = file.status === 'Completed' ? { status: file.status, size: Number(file.size ?? 0) } : { status: file.status };
  if (options.contentUrl) json.contentUrl = options.contentUrl;
  json.contentPublic = file.contentPublic;
  if (options.permissions) json.permissions = file.permissions.map((p) => ({ userId: p.userId, contentReadable: p.contentReadable }));
  return json;
}

/**
 * A search hit as fileJson renders the same file (same keys, same order), from the narrower row a
 * search reads: dates are already ISO text and the permission entries already have the client's
 * shape (built by the SQL), so a page of up to 10,000 hits allocates as little as possible.
 */
export function listingJson(file: FileListing, options: { permissions: boolean; contentUrl?: string }): FileJson {
  const json: FileJson = { fileId: file.fileId, name: file.name, source: file.source, tags: file.tags } as FileJson;
  if (file.title !== null) json.title = file.title;
  if (file.description !== null) json.description = file.description;
  json.dateCreated = file.dateCreated;
  json.lastUpdated = file.lastUpdated;
  json.status = file.status === 'Completed' ? { status: file.status, size: Number(file.size ?? 0) } : { status: file.status };
  if (options.contentUrl) json.contentUrl = options.contentUrl;
  json.contentPublic = file.contentPublic;
  if (options.permissions) json.permissions = file.permissions;
  return json;
}
