// What the data API accepts: table names, query parameters and record bodies, all bounded.
import { z } from 'zod';
import { ApiError, parseInput } from '@pds/http';

/** Same shape as app namespaces (@pds/app-record), so an app's namespace is always a valid table namespace. */
export const NAMESPACE = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Segments as in an app's `dataRead` endpoint; up to four, joined by "/" as the original allowed. */
export const ENDPOINT = /^[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}(\/[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}){0,3}$/;

export const MAX_RECORDS_PER_REQUEST = 1000;
export const MAX_RECORD_BYTES = 256 * 1024;
const MAX_DEPTH = 32;
export const MAX_TAKE = 1000;

export const tableSchema = z.object({
  namespace: z.string().regex(NAMESPACE, 'must be 1-64 of a-z, 0-9, - and _, starting with a letter or digit'),
  endpoint: z.string().max(515).regex(ENDPOINT, 'must be 1-4 segments of a-z, A-Z, 0-9, - and _ joined by /'),
});

export type Table = z.output<typeof tableSchema>;

/** Unknown parameters are stripped, never used as filters (the original filtered by them, tokens included). */
export const listQuerySchema = z.object({
  orderBy: z
    .string()
    .regex(/^[^.\p{Cc}]{1,128}(\.[^.\p{Cc}]{1,128}){0,7}$/u, 'must be a path into the data such as field or a.b (at most 8 parts)')
    .transform((path) => path.split('.'))
    .optional(),
  // As in the original, only the exact word reverses the order.
  ordering: z.string().max(32).optional(),
  skip: z.coerce.number().int().min(0).max(1_000_000).default(0),
  take: z.coerce.number().int().min(0).max(MAX_TAKE).default(MAX_TAKE),
});

export function parseListQuery(query: unknown) {
  const { ordering, ...rest } = parseInput(listQuerySchema, query, 'query');
  return { ...rest, descending: ordering === 'descending' };
}

/**
 * A POST body: one JSON object, or a non-empty array of them. Each record is bounded in size and depth,
 * and may not hold NUL characters, which jsonb cannot store.
 */
export function parseRecords(body: unknown): { records: object[]; single: boolean } {
  const single = !Array.isArray(body);
  const records: unknown[] = single ? [body] : body;
  if (records.length === 0) throw ApiError.badRequest('body: must be a JSON object or a non-empty array of objects');
  if (records.length > MAX_RECORDS_PER_REQUEST) throw ApiError.badRequest(`body: at most ${MAX_RECORDS_PER_REQUEST} records per request`);
  records.forEach((record, i) => {
    const field = single ? 'body' : `body[${i}]`;
    if (typeof record !== 'object' || record === null || Array.isArray(record)) throw ApiError.badRequest(`${field}: must be a JSON object`);
    if (Buffer.byteLength(JSON.stringify(record)) > MAX_RECORD_BYTES) throw ApiError.tooLarge(`${field}: a record may be at most ${MAX_RECORD_BYTES} bytes`);
    const problem = storable(record, 1);
    if (problem) throw ApiError.badRequest(`${field}: ${problem}`);
  });
  return { records: records as object[], single };
}

function storable(value: unknown, depth: number): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? 'strings may not contain NUL characters' : null;
  if (typeof value !== 'object' || value === null) return null;
  if (depth > MAX_DEPTH) return `may nest at most ${MAX_DEPTH} levels deep`;
  for (const [key, item] of Object.entries(value)) {
    if (key.includes('\u0000')) return 'keys may not contain NUL characters';
    const problem = storable(item, depth + 1);
    if (problem) return problem;
  }
  return null;
}
