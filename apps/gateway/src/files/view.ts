// The file record as clients see it (CONTRACT §2): ISO dates with milliseconds, optional fields
// omitted rather than null, status as an object with the size once Completed.
import type { FileRecord } from '@pds/db';

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
  return {
    fileId: file.fileId,
    name: file.name,
    source: file.source,
    tags: file.tags,
    ...(file.title !== null ? { title: file.title } : {}),
    ...(file.description !== null ? { description: file.description } : {}),
    dateCreated: file.dateCreated.toISOString(),
    lastUpdated: file.lastUpdated.toISOString(),
    status: file.status === 'Completed' ? { status: file.status, size: Number(file.size ?? 0) } : { status: file.status },
    ...(options.contentUrl ? { contentUrl: options.contentUrl } : {}),
    contentPublic: file.contentPublic,
    ...(options.permissions
      ? { permissions: file.permissions.map((p) => ({ userId: p.userId, contentReadable: p.contentReadable })) }
      : {}),
  };
}
