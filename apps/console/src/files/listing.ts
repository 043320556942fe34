// One page of a file listing: filter, sort and cut a list of files. Pure, so a server-side listing
// can replace it without the screens noticing (see source.ts), and so it is tested without a browser.
import type { FileRecord } from '../types';
import { kindOf, type FileKind } from './kinds';
import { sharedWith } from './words';

export type Choice = '' | 'yes' | 'no';

export interface FileFilter {
  /** Words in the name or title, any case. */
  text: string;
  kind: FileKind | '';
  tag: string;
  /** Given to another account (the owner's view only). */
  shared: Choice;
  public: Choice;
}

export const NO_FILTER: FileFilter = { text: '', kind: '', tag: '', shared: '', public: '' };

export type SortKey = 'name' | 'date' | 'size';

export interface FileSort {
  by: SortKey;
  descending: boolean;
}

/** Newest first, as the API lists them. */
export const DEFAULT_SORT: FileSort = { by: 'date', descending: true };

export interface FileQuery {
  filter: FileFilter;
  sort: FileSort;
  skip: number;
  take: number;
}

export interface FilePage {
  files: FileRecord[];
  /** How many files match the filter. */
  total: number;
  /** Their bytes together. */
  totalBytes: number;
  /** Every tag in use, for the tag filter. */
  tags: string[];
}

const names = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

const COMPARE: Record<SortKey, (a: FileRecord, b: FileRecord) => number> = {
  name: (a, b) => names.compare(a.name, b.name),
  // ISO 8601 UTC text with milliseconds (CONTRACT §0) sorts as the instants do.
  date: (a, b) => (a.lastUpdated ?? '').localeCompare(b.lastUpdated ?? ''),
  size: (a, b) => (a.status.size ?? 0) - (b.status.size ?? 0),
};

const matches = (choice: Choice, value: boolean) => choice === '' || (choice === 'yes') === value;

export function filterFiles(files: FileRecord[], filter: FileFilter, viewerId: string): FileRecord[] {
  const text = filter.text.trim().toLowerCase();
  return files.filter(
    (file) =>
      (!text || file.name.toLowerCase().includes(text) || (file.title ?? '').toLowerCase().includes(text)) &&
      (!filter.kind || kindOf(file.name) === filter.kind) &&
      (!filter.tag || (file.tags ?? []).includes(filter.tag)) &&
      matches(filter.shared, sharedWith(file, viewerId).length > 0) &&
      matches(filter.public, file.contentPublic),
  );
}

export function sortFiles(files: FileRecord[], sort: FileSort): FileRecord[] {
  const compare = COMPARE[sort.by];
  const direction = sort.descending ? -1 : 1;
  // The fileId breaks ties, so equal names or sizes keep one order from page to page.
  return [...files].sort((a, b) => direction * compare(a, b) || a.fileId.localeCompare(b.fileId));
}

export function pageOf(all: FileRecord[], query: FileQuery, viewerId: string): FilePage {
  const matching = filterFiles(all, query.filter, viewerId);
  return {
    files: sortFiles(matching, query.sort).slice(query.skip, query.skip + query.take),
    total: matching.length,
    totalBytes: matching.reduce((sum, file) => sum + (file.status.size ?? 0), 0),
    tags: [...new Set(all.flatMap((file) => file.tags ?? []))].sort(names.compare),
  };
}
