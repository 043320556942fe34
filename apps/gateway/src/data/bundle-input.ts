// What a bundle may say: the original's BundleStructure ({ name, bundle: { property: PropertyQuery } }),
// bounded, and turned into the selections packages/db evaluates in SQL.
import { z } from 'zod';
import type { BundleFilter, DataPath, EndpointSelection, PropertySelection } from '@pds/db';
import { ApiError, parseInput } from '@pds/http';
import { ENDPOINT, NAMESPACE, requireStorable } from './input';

/** A bundle name as stored; any other name cannot exist, so lookups of it need no query. */
export const BUNDLE_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$/;
export const MAX_BUNDLE_LIMIT = 1000;
const MAX_PROPERTIES = 32;
const MAX_ENDPOINTS = 16;
const MAX_FILTERS = 16;

const path = z
  .string()
  .regex(/^[^.\p{Cc}]{1,128}(\.[^.\p{Cc}]{1,128}){0,7}$/u, 'must be a path into the data such as field or a.b (at most 8 parts)');
const jsonValue = z
  .unknown()
  .refine((v) => v !== undefined && JSON.stringify(v).length <= 4096, 'must be a JSON value of at most 4096 characters');

const operator = z.discriminatedUnion('operator', [
  z.object({ operator: z.literal('contains'), value: jsonValue }),
  z.object({ operator: z.literal('in'), value: jsonValue }),
  z.object({ operator: z.literal('between'), lower: jsonValue, upper: jsonValue }),
  z.object({ operator: z.literal('find'), search: z.string().min(1).max(256) }),
]);

/** PostgreSQL date_part fields, as the original's datetimeExtract / timestampExtract take them. */
const DATE_PARTS = [
  'century',
  'day',
  'decade',
  'dow',
  'doy',
  'epoch',
  'hour',
  'isodow',
  'isoyear',
  'microseconds',
  'millennium',
  'milliseconds',
  'minute',
  'month',
  'quarter',
  'second',
  'week',
  'year',
] as const;

const transformation = z.discriminatedUnion('transformation', [
  z.object({ transformation: z.literal('identity') }).loose(),
  z.object({ transformation: z.literal('searchable') }).loose(),
  z.object({ transformation: z.literal('datetimeExtract'), part: z.enum(DATE_PARTS) }).loose(),
  z.object({ transformation: z.literal('timestampExtract'), part: z.enum(DATE_PARTS) }).loose(),
]);

// `searchable` is the full-text reading `find` always does; a date part is compared, never searched.
const filter = z
  .object({ field: path, transformation: transformation.optional(), operator })
  .refine(
    (f) => f.transformation?.transformation !== 'searchable' || f.operator.operator === 'find',
    'the searchable transformation goes with the find operator',
  )
  .refine(
    (f) => !f.transformation?.transformation.endsWith('Extract') || f.operator.operator !== 'find',
    'a date part cannot be searched with find',
  );

interface EndpointQueryInput {
  endpoint: string;
  mapping?: Record<string, string>;
  filters?: z.output<typeof filter>[];
  links?: EndpointQueryInput[];
}

// `namespace/endpoint` as records name their table, or `namespace` alone for all of its endpoints.
const tablePath = z.string().refine((value) => {
  const [namespace = '', ...rest] = value.split('/');
  return NAMESPACE.test(namespace) && (rest.length === 0 || ENDPOINT.test(rest.join('/')));
}, 'must be namespace/endpoint or a namespace');

const endpointQuery: z.ZodType<EndpointQueryInput> = z.lazy(() =>
  z.object({
    endpoint: tablePath,
    mapping: z
      .record(z.string().min(1).max(128), path)
      .refine((m) => Object.keys(m).length <= 64, 'at most 64 fields')
      .optional(),
    filters: z.array(filter).max(MAX_FILTERS).optional(),
    links: z.array(endpointQuery).max(MAX_ENDPOINTS).optional(),
  }),
);

const endpointQueries = z.array(endpointQuery).min(1).max(MAX_ENDPOINTS);

const propertyQuery = z.object({
  endpoints: endpointQueries,
  orderBy: path.optional(),
  ordering: z.enum(['ascending', 'descending']).optional(),
  limit: z.number().int().min(1).max(MAX_BUNDLE_LIMIT).optional(),
});

export const bundleSchema = z.object({
  name: z.string().regex(BUNDLE_NAME, 'must be 1-128 of letters, digits, _ . and -'),
  bundle: z
    .record(z.string().min(1).max(128), propertyQuery)
    .refine((b) => Object.keys(b).length >= 1 && Object.keys(b).length <= MAX_PROPERTIES, `must have 1-${MAX_PROPERTIES} properties`),
});

export type BundleStructure = z.output<typeof bundleSchema>;
export type PropertyQuery = z.output<typeof propertyQuery>;

export function parseBundle(input: unknown, field = 'body'): BundleStructure {
  requireStorable(input, field);
  return parseInput(bundleSchema, input, field);
}

/** A combinator: the endpoint queries of one property, as the original's clients send them (an array). */
export const combinatorSchema = endpointQueries;
export type EndpointQueries = z.output<typeof combinatorSchema>;

export function parseCombinator(input: unknown): EndpointQueries {
  requireStorable(input, 'body');
  return parseInput(combinatorSchema, input, 'body');
}

const splitPath = (value: string): DataPath => value.split('.');

function selection(query: EndpointQueryInput, depth: number): EndpointSelection {
  if (depth > 2) throw ApiError.badRequest('bundle: links may nest at most two levels deep');
  const [namespace, ...rest] = query.endpoint.split('/') as [string, ...string[]];
  return {
    namespace,
    endpoint: rest.length ? rest.join('/') : null,
    ...(query.mapping ? { mapping: Object.entries(query.mapping).map(([name, p]): [string, DataPath] => [name, splitPath(p)]) } : {}),
    filters: (query.filters ?? []).map(({ field, transformation: t, operator: op }): BundleFilter => {
      const extract =
        t && 'part' in t ? { extract: { from: t.transformation === 'datetimeExtract' ? 'datetime' : 'timestamp', part: t.part } } : {};
      return { path: splitPath(field), ...extract, ...op } as BundleFilter;
    }),
    links: (query.links ?? []).map((link) => selection(link, depth + 1)),
  };
}

/** Endpoint queries, ordered and paged, as one property of DataBundleRepository.evaluate. */
export function propertySelection(
  endpoints: EndpointQueries,
  page: { orderBy?: DataPath; descending: boolean; skip?: number; limit: number },
): PropertySelection {
  return { endpoints: endpoints.map((query) => selection(query, 1)), ...page };
}

/** A stored bundle's properties, ready for DataBundleRepository.evaluate. */
export function selections(bundle: BundleStructure): [string, PropertySelection][] {
  return Object.entries(bundle.bundle).map(([name, property]) => [
    name,
    propertySelection(property.endpoints, {
      ...(property.orderBy ? { orderBy: splitPath(property.orderBy) } : {}),
      descending: property.ordering === 'descending',
      limit: property.limit ?? MAX_BUNDLE_LIMIT,
    }),
  ]);
}
