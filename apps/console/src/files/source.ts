// Where the files screen gets its files: the one module that knows how the API lists them. Today the
// search call (POST /files/search) is read to the end in chunks and paged here; a server-side listing
// with totals, sorting and thumbnails replaces `searchSource` without a screen changing.
import { call } from '../api';
import type { FileRecord } from '../types';
import { pageOf, type FilePage, type FileQuery } from './listing';

export interface FilesSource {
  /** One page of the completed files that match, with the total. */
  page(query: FileQuery): Promise<FilePage>;
  /** Uploads that were started and never completed. */
  unfinished(): Promise<FileRecord[]>;
  /** The files changed: the next page is read afresh. */
  changed(): void;
  /** A small picture of the file, when the server makes them (none yet: type icons stand in). */
  thumbnailUrl(file: FileRecord): string | undefined;
}

/** The search call's largest page is 10,000; 1,000 keeps the first answer quick. */
const CHUNK = 1000;

async function searchAll(template: object): Promise<FileRecord[]> {
  const files: FileRecord[] = [];
  for (;;) {
    const chunk = await call<FileRecord[]>(`/api/v2.6/files/search?take=${CHUNK}&skip=${files.length}`, { method: 'POST', body: template });
    files.push(...chunk);
    if (chunk.length < CHUNK) return files;
  }
}

export function searchSource(viewerId: string): FilesSource {
  let completed: Promise<FileRecord[]> | undefined;
  return {
    async page(query) {
      completed ??= searchAll({ status: { status: 'Completed' } });
      try {
        return pageOf(await completed, query, viewerId);
      } catch (error) {
        completed = undefined;
        throw error;
      }
    },
    unfinished: () => searchAll({ status: { status: 'New' } }),
    changed: () => (completed = undefined),
    thumbnailUrl: () => undefined,
  };
}
