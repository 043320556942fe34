// What the files screen asks the server's listing for: filters, sort and a page, as the address of
// GET /api/v2.6/files/listing (pure, so it is tested without a browser). The server filters, sorts,
// pages and totals; source.ts makes the calls.
import type { FileRecord } from '../types';
import type { FileKind } from './kinds';

export type Choice = '' | 'yes' | 'no';

export interface FileFilter {
  /** Words that start a word of the name, title, description or source, any case. */
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

/** The most files one listing call returns. */
export const LISTING_MAX_TAKE = 200;

const CHOICE = { yes: 'true', no: 'false' } as const;

/** The listing call for one page of completed files (`status` New: the unfinished uploads). */
export function listingPath(query: FileQuery, status: 'Completed' | 'New' = 'Completed'): string {
  const { filter, sort } = query;
  const params = new URLSearchParams({ status, sort: sort.by, order: sort.descending ? 'desc' : 'asc' });
  if (filter.text.trim()) params.set('q', filter.text.trim());
  if (filter.kind) params.set('type', filter.kind);
  if (filter.tag) params.set('tag', filter.tag);
  if (filter.shared) params.set('shared', CHOICE[filter.shared]);
  if (filter.public) params.set('public', CHOICE[filter.public]);
  params.set('skip', String(query.skip));
  params.set('take', String(Math.min(query.take, LISTING_MAX_TAKE)));
  return `/api/v2.6/files/listing?${params}`;
}
