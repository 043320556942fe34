// What the data API accepts: table names, query parameters and record bodies, all bounded.
import { z } from 'zod';
import { recordJson, type RecordJson } from '@pds/db';
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

/** The list query as the repository takes it: `ordering=descending` reverses the order. */
export const listQuery = listQuerySchema.transform(({ ordering, ...rest }) => ({ descending: ordering === 'descending', ...rest }));

/** A table named by the path `/data/:namespace/*endpoint` (the endpoint's segments joined again). */
export const tableParams = z.object({
  namespace: tableSchema.shape.namespace,
  endpoint: z
    .array(z.string())
    .transform((segments) => segments.join('/'))
    .pipe(tableSchema.shape.endpoint),
});

/**
 * A POST body: one JSON object, or a non-empty array of them. Each record is bounded in size and depth,
 * and may not hold NUL characters, which jsonb cannot store. With `skipErrors` (the original's
 * `?skipErrors=true`) records that fail are left out instead of failing the whole body.
 */
export function parseRecords(body: unknown, skipErrors = false): { records: RecordJson[]; single: boolean } {
  const single = !Array.isArray(body);
  const records: unknown[] = single ? [body] : body;
  if (records.length === 0) throw ApiError.badRequest('body: must be a JSON object or a non-empty array of objects');
  if (records.length > MAX_RECORDS_PER_REQUEST) throw ApiError.badRequest(`body: at most ${MAX_RECORDS_PER_REQUEST} records per request`);
  const kept: RecordJson[] = [];
  records.forEach((record, i) => {
    try {
      kept.push(parseRecord(record, single ? 'body' : `body[${i}]`));
    } catch (error) {
      if (!skipErrors) throw error;
    }
  });
  return { records: kept, single };
}

/** One record's data: a JSON object within the size and depth bounds, with the JSON text it is stored as. */
export function parseRecord(data: unknown, field: string): RecordJson {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw ApiError.badRequest(`${field}: must be a JSON object`);
  const record = recordJson(data);
  if (record.bytes > MAX_RECORD_BYTES) throw ApiError.tooLarge(`${field}: a record may be at most ${MAX_RECORD_BYTES} bytes`);
  requireStorable(data, field);
  return record;
}

const recordId = z.uuid('must be a record id (UUID)');

/**
 * `?records=a&records=b` (the original's form) or `?records=a,b` (what hat-js sends): distinct ids,
 * at most MAX_RECORDS_PER_REQUEST.
 */
export function parseRecordIds(query: unknown): string[] {
  const { records } = parseInput(
    z.object({ records: z.union([z.string(), z.array(z.string()).max(MAX_RECORDS_PER_REQUEST)]) }),
    query,
    'query',
  );
  const ids = (Array.isArray(records) ? records : [records]).flatMap((value) => value.split(','));
  const parsed = parseInput(z.array(recordId).min(1).max(MAX_RECORDS_PER_REQUEST), ids, 'records');
  return [...new Set(parsed)];
}

/** `namespace/endpoint`, as records name their table; a problem is reported under `field`. */
export function parseTablePath(path: string, field: string): Table {
  const slash = path.indexOf('/');
  const parsed = tableSchema.safeParse({
    namespace: path.slice(0, slash < 0 ? path.length : slash),
    endpoint: slash < 0 ? '' : path.slice(slash + 1),
  });
  if (!parsed.success)
    throw ApiError.badRequest(
      `${field}: must be namespace/endpoint (${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')})`,
    );
  return parsed.data;
}

const updateSchema = z
  .array(z.object({ recordId, data: z.unknown() }).loose())
  .min(1, 'must be a non-empty array of records')
  .max(MAX_RECORDS_PER_REQUEST)
  .refine((changes) => new Set(changes.map((c) => c.recordId)).size === changes.length, 'names a record twice');

/** PUT /data: records `{ recordId, data }` (other fields such as endpoint are ignored). */
export function parseUpdates(body: unknown): { recordId: string; data: RecordJson }[] {
  return parseInput(updateSchema, body).map((change, i) => ({
    recordId: change.recordId,
    data: parseRecord(change.data, `body[${i}].data`),
  }));
}

const MAX_LINKS = 100;
const batchItem = z.object({ endpoint: z.string().max(580), data: z.unknown() }).loose();
const batchSchema = z
  .array(batchItem.extend({ links: z.array(batchItem).max(MAX_LINKS).optional() }))
  .min(1, 'must be a non-empty array of records')
  .max(MAX_RECORDS_PER_REQUEST);

export interface BatchInput {
  table: Table;
  data: RecordJson;
  links: { table: Table; data: RecordJson }[];
}

/** POST /data-batch: records `{ endpoint: "namespace/endpoint", data, links? }`. */
export function parseBatch(body: unknown): BatchInput[] {
  const items = parseInput(batchSchema, body);
  // A batch names few tables many times: each name is judged once.
  const tables = new Map<string, Table>();
  const table = (path: string, field: string) => {
    let parsed = tables.get(path);
    if (!parsed) tables.set(path, (parsed = parseTablePath(path, field)));
    return parsed;
  };
  let total = 0;
  return items.map((item, i) => {
    total += 1 + (item.links?.length ?? 0);
    if (total > MAX_RECORDS_PER_REQUEST) throw ApiError.badRequest(`body: at most ${MAX_RECORDS_PER_REQUEST} records, links included`);
    return {
      table: table(item.endpoint, `body[${i}].endpoint`),
      data: parseRecord(item.data, `body[${i}].data`),
      links: (item.links ?? []).map((link, j) => ({
        table: table(link.endpoint, `body[${i}].links[${j}].endpoint`),
        data: parseRecord(link.data, `body[${i}].links[${j}].data`),
      })),
    };
  });
}

/** Any JSON body stored as jsonb or text (bundles, debit terms): no NUL characters, bounded depth. */
export function requireStorable(value: unknown, field: string): void {
  const problem = storable(value, 1);
  if (problem) throw ApiError.badRequest(`${field}: ${problem}`);
}

// Runs per record: keys and items are read in place (Object.entries made an array per property, three times the cost).
function storable(value: unknown, depth: number): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? 'strings may not contain NUL characters' : null;
  if (typeof value !== 'object' || value === null) return null;
  if (depth > MAX_DEPTH) return `may nest at most ${MAX_DEPTH} levels deep`;
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = storable(item, depth + 1);
      if (problem) return problem;
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    if (key.includes('\u0000')) return 'keys may not contain NUL characters';
    const problem = storable((value as Record<string, unknown>)[key], depth + 1);
    if (problem) return problem;
  }
  return null;
}
