// Where the files screen gets its files: the one module that knows how the API lists them. The server's
// listing filters, sorts, pages and totals; the tags for the tag filter are read once per screen.
import { call } from '../api';
import type { FileRecord } from '../types';
import { DEFAULT_SORT, LISTING_MAX_TAKE, listingPath, NO_FILTER, type FilePage, type FileQuery } from './listing';

interface Listing {
  files: FileRecord[];
  total: number;
  totalBytes: number;
}

export interface FilesSource {
  /** One page of the completed files that match, with the total. */
  page(query: FileQuery): Promise<FilePage>;
  /** Every file id that matches (for "select all"), read a page at a time. */
  allIds(query: Omit<FileQuery, 'skip' | 'take'>): Promise<string[]>;
  /** Uploads that were started and never completed (the most recent ones), and how many there are. */
  unfinished(): Promise<{ files: FileRecord[]; total: number }>;
  /** The files changed: the tags are read afresh. */
  changed(): void;
  /** A small picture of the file, when the server made one (an image); type icons stand in otherwise. */
  thumbnailUrl(file: FileRecord): string | undefined;
}

export function listingSource(): FilesSource {
  let tags: Promise<string[]> | undefined;
  const readTags = () => {
    tags ??= call<{ tags: string[] }>('/api/v2.6/files/tags').then(
      (found) => found.tags,
      (error: unknown) => {
        tags = undefined;
        throw error;
      },
    );
    return tags;
  };
  return {
    async page(query) {
      const [listing, known] = await Promise.all([call<Listing>(listingPath(query)), readTags()]);
      return { ...listing, tags: known };
    },
    async allIds(query) {
      const ids: string[] = [];
      for (let total = Infinity; ids.length < total;) {
        const listing = await call<Listing>(listingPath({ ...query, skip: ids.length, take: LISTING_MAX_TAKE }));
        ids.push(...listing.files.map((file) => file.fileId));
        total = listing.files.length === 0 ? ids.length : listing.total;
      }
      return ids;
    },
    unfinished: () => call<Listing>(listingPath({ filter: NO_FILTER, sort: DEFAULT_SORT, skip: 0, take: LISTING_MAX_TAKE }, 'New')),
    changed: () => (tags = undefined),
    thumbnailUrl: (file) => file.thumbnailUrl,
  };
}
