// Where the data browser reads a table: a page of records, and how many there are (the server counts).
import { call } from './api';
import type { DataRecord } from './types';

const segments = (endpoint: string) => endpoint.split('/').map(encodeURIComponent).join('/');

export const tablePath = (namespace: string, endpoint: string) => `/api/v2.6/data/${encodeURIComponent(namespace)}/${segments(endpoint)}`;

export const readRecords = (path: string, skip: number, take: number) => call<DataRecord[]>(`${path}?skip=${skip}&take=${take}`);

/** How many records the table holds. */
export const countRecords = async (namespace: string, endpoint: string) =>
  (await call<{ count: number }>(`/api/v2.6/data-count/${encodeURIComponent(namespace)}/${segments(endpoint)}`)).count;
