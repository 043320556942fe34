// The data tables: `GET/POST/DELETE /api/v2.6/data/:namespace/:endpoint`; records by id
// (`/data-record/:id`, `PUT /data`, `DELETE /data?records=`), batches, links and the list of tables.
import { z } from 'zod';
import { json, jsonText } from '@pds/http';
import { route, type GatewayRoute } from '../route';
import { recordsRead } from '../events/read-notes';
import { listQuery, MAX_RECORDS_PER_REQUEST, parseRecordIds, tableParams } from './input';
import type { DataService } from './service';

const DATA = '/api/v2.6/data';
// The endpoint may span several path segments (`/data/ns/feed/likes`), as in the original.
const TABLE = `${DATA}/:namespace/*endpoint`;
const tag = 'data';
const ACCESS = 'The owner; an application within its permission sets (write: its own namespace); a user with a data grant.';

export const recordBody = z.looseObject({ endpoint: z.string().describe('namespace/endpoint'), recordId: z.uuid(), data: z.unknown() });
const records = { description: 'The records', body: z.array(recordBody) };
const deleted = { 200: { description: 'How many were deleted', body: z.object({ message: z.string(), deleted: z.int() }) } };
// Record bodies are checked by hand (size and depth while walking: input.ts), so these only document them.
const recordsInput = z.union([
  z.record(z.string(), z.unknown()),
  z.array(z.record(z.string(), z.unknown())).min(1).max(MAX_RECORDS_PER_REQUEST),
]);
const recordsQuery = z.object({ records: z.union([z.string(), z.array(z.string())]).describe('Record ids (repeat the parameter)') });
const skipErrorsQuery = z.object({ skipErrors: z.enum(['true', 'false']).optional().describe('Store the valid records, drop the others') });

export function dataRoutes(data: DataService): GatewayRoute[] {
  return [
    route({
      method: 'get',
      path: `${DATA}/sources`,
      access: 'token',
      tag,
      summary: 'The tables the caller may read, by namespace',
      responses: { 200: { description: 'namespace → endpoints', body: z.record(z.string(), z.array(z.string())) } },
      handle: async ({ tenant, caller }) => json(await data.sources(tenant, caller)),
    }),
    // Status codes as the original: 201 for an update, 200 for a delete.
    route({
      method: 'put',
      path: DATA,
      access: 'token',
      tag,
      summary: 'Replace the data of records by id',
      description: ACCESS,
      documents: { body: z.array(z.looseObject({ recordId: z.uuid(), data: z.record(z.string(), z.unknown()) })) },
      responses: { 201: records },
      handle: async ({ tenant, caller, body }) => json(await data.update(tenant, caller, { body }), 201),
    }),
    route({
      method: 'delete',
      path: DATA,
      access: 'token',
      tag,
      summary: 'Delete records by id',
      description: ACCESS,
      documents: { query: recordsQuery },
      responses: deleted,
      handle: async ({ tenant, caller, query }) =>
        json({ message: 'All records deleted', deleted: await data.remove(tenant, caller, { recordIds: parseRecordIds(query) }) }),
    }),
    route({
      method: 'get',
      path: '/api/v2.6/data-record/:recordId',
      access: 'token',
      tag,
      summary: 'One record by id',
      description: ACCESS,
      params: z.object({ recordId: z.string() }),
      responses: { 200: { description: 'The record', body: recordBody } },
      read: recordsRead,
      async handle({ tenant, caller, params }) {
        const [recordId] = parseRecordIds({ records: params.recordId });
        return json(await data.get(tenant, caller, { recordId: recordId as string }));
      },
    }),
    // Beside the table's path, not under it: an endpoint may itself end in a segment called count.
    route({
      method: 'get',
      path: `/api/v2.6/data-count/:namespace/*endpoint`,
      access: 'token',
      tag,
      summary: 'How many records a table holds',
      description: `${ACCESS} The rules of reading the table.`,
      params: tableParams,
      responses: { 200: { description: 'The number of records', body: z.object({ count: z.int() }) } },
      handle: async ({ tenant, caller, params }) => json(await data.count(tenant, caller, { table: params })),
    }),
    route({
      method: 'post',
      path: '/api/v2.6/data-batch',
      access: 'token',
      tag,
      summary: 'Store records into several tables at once, all or nothing',
      description: ACCESS,
      documents: { body: z.array(z.looseObject({ endpoint: z.string(), data: z.unknown() })) },
      responses: { 201: { description: 'The stored records', body: z.array(recordBody) } },
      async handle({ tenant, caller, body }) {
        const saved = await data.batch(tenant, caller, { body });
        return jsonText(saved.json, saved.count, 201);
      },
    }),
    route({
      method: 'post',
      path: '/api/v2.6/data-link',
      access: 'token',
      tag,
      summary: 'Link records into a group',
      description: ACCESS,
      documents: { query: recordsQuery },
      responses: { 201: { description: 'Linked', body: z.object({ message: z.string() }) } },
      async handle({ tenant, caller, query }) {
        await data.link(tenant, caller, { recordIds: parseRecordIds(query) });
        return json({ message: 'Grouping registered' }, 201);
      },
    }),
    route({
      method: 'get',
      path: TABLE,
      access: 'token',
      tag,
      summary: 'Read the records of a table',
      description: `${ACCESS} The endpoint may span up to four path segments.`,
      params: tableParams,
      query: listQuery,
      responses: { 200: records },
      read: recordsRead,
      async handle({ tenant, caller, params, query }) {
        const list = await data.list(tenant, caller, { table: params, query });
        return jsonText(list.json, list.count);
      },
    }),
    route({
      method: 'post',
      path: TABLE,
      access: 'token',
      tag,
      summary: 'Store one record, or several all or nothing',
      description: ACCESS,
      params: tableParams,
      documents: { query: skipErrorsQuery, body: recordsInput },
      responses: {
        201: {
          description: 'The stored record, or the array of them when an array was sent',
          body: z.union([recordBody, z.array(recordBody)]),
        },
      },
      async handle({ tenant, caller, params, query, body }) {
        const skipErrors = query.skipErrors === 'true';
        const { saved, single } = await data.create(tenant, caller, { table: params, body, skipErrors });
        if (!single) return jsonText(`[${saved.join(',')}]`, saved.length, 201);
        // One record sent, and left out by skipErrors: an empty answer.
        return saved[0] === undefined ? json(undefined, 201) : jsonText(saved[0], 1, 201);
      },
    }),
    route({
      method: 'delete',
      path: TABLE,
      access: 'token',
      tag,
      summary: 'Delete every record of a table',
      description: ACCESS,
      params: tableParams,
      responses: deleted,
      handle: async ({ tenant, caller, params }) =>
        json({ message: 'All records deleted', deleted: await data.deleteAll(tenant, caller, { table: params }) }),
    }),
  ];
}
