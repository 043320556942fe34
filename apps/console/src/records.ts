// Where the data browser reads a table: a page of records, and how many there are. The API has no
// count, so the table is read through in chunks and only the number kept; a count from the server
// (or a total header) replaces `countRecords` without the screen changing.
import { call } from './api';
import type { DataRecord } from './types';

/** The data API's largest page. */
const CHUNK = 1000;
/** Past this many the count stops and says "more than". */
const COUNT_LIMIT = 100_000;

export const tablePath = (namespace: string, endpoint: string) =>
  `/api/v2.6/data/${encodeURIComponent(namespace)}/${endpoint.split('/').map(encodeURIComponent).join('/')}`;

export const readRecords = (path: string, skip: number, take: number) => call<DataRecord[]>(`${path}?skip=${skip}&take=${take}`);

export interface Count {
  count: number;
  /** False while counting, or when the count stopped at its limit. */
  complete: boolean;
}

/** Counts the table's records; `onCount` hears each step; `stopped()` ends it early (the screen closed). */
export async function countRecords(path: string, onCount: (count: Count) => void, stopped: () => boolean): Promise<void> {
  let count = 0;
  while (!stopped()) {
    const chunk = (await readRecords(path, count, CHUNK)).length;
    count += chunk;
    const complete = chunk < CHUNK;
    if (complete || count >= COUNT_LIMIT) return onCount({ count, complete });
    onCount({ count, complete: false });
  }
}
