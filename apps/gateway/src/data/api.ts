// OpenAPI description of the data tables and data grants (see @pds/http openapi.ts).
import { z } from 'zod';
import type { ApiOperation } from '@pds/http';
import { grantQuery, grantSchema } from './grant-routes';
import { listQuerySchema, MAX_RECORDS_PER_REQUEST } from './input';

const TABLE = '/api/v2.6/data/:namespace/*endpoint';
const record = z.looseObject({ endpoint: z.string().describe('namespace/endpoint'), recordId: z.uuid(), data: z.unknown() });
const grantBody = z.object({ userId: z.uuid(), namespace: z.string(), endpoint: z.string(), access: z.enum(['read', 'write']) });
// parseRecords checks bodies by hand (size and depth while walking), so this object only documents them.
const recordsInput = z.union([
  z.record(z.string(), z.unknown()),
  z.array(z.record(z.string(), z.unknown())).min(1).max(MAX_RECORDS_PER_REQUEST),
]);
const access = 'The owner; an application within its permission sets (write: its own namespace); a user with a data grant.';

const DATA = '/api/v2.6/data';
const recordsQuery = z.object({ records: z.union([z.string(), z.array(z.string())]).describe('Record ids (repeat the parameter)') });

export const dataApi: ApiOperation[] = [
  {
    method: 'get',
    path: `${DATA}/sources`,
    tag: 'data',
    auth: 'instanceToken',
    summary: 'The tables the caller may read, by namespace',
    responses: { 200: { description: 'namespace → endpoints', body: z.record(z.string(), z.array(z.string())) } },
  },
  {
    method: 'put',
    path: DATA,
    tag: 'data',
    auth: 'instanceToken',
    summary: 'Replace the data of records by id',
    description: access,
    // parseUpdates checks the body by hand, so this object only documents it.
    body: z.array(z.looseObject({ recordId: z.uuid(), data: z.record(z.string(), z.unknown()) })),
    responses: { 201: { description: 'The updated records', body: z.array(record) } },
  },
  {
    method: 'delete',
    path: DATA,
    tag: 'data',
    auth: 'instanceToken',
    summary: 'Delete records by id',
    description: access,
    query: recordsQuery,
    responses: { 200: { description: 'How many were deleted', body: z.object({ message: z.string(), deleted: z.int() }) } },
  },
  {
    method: 'get',
    path: '/api/v2.6/data-record/:recordId',
    tag: 'data',
    auth: 'instanceToken',
    summary: 'One record by id',
    description: access,
    responses: { 200: { description: 'The record', body: record } },
  },
  {
    method: 'post',
    path: '/api/v2.6/data-batch',
    tag: 'data',
    auth: 'instanceToken',
    summary: 'Store records into several tables at once, all or nothing',
    description: access,
    body: z.array(z.looseObject({ endpoint: z.string(), data: z.unknown() })),
    responses: { 201: { description: 'The stored records', body: z.array(record) } },
  },
  {
    method: 'post',
    path: '/api/v2.6/data-link',
    tag: 'data',
    auth: 'instanceToken',
    summary: 'Link records into a group',
    description: access,
    query: recordsQuery,
    responses: { 201: { description: 'Linked', body: z.object({ message: z.string() }) } },
  },
  {
    method: 'get',
    path: TABLE,
    tag: 'data',
    auth: 'instanceToken',
    summary: 'Read the records of a table',
    description: `${access} The endpoint may span up to four path segments.`,
    query: listQuerySchema,
    responses: { 200: { description: 'The records', body: z.array(record) } },
  },
  {
    method: 'post',
    path: TABLE,
    tag: 'data',
    auth: 'instanceToken',
    summary: 'Store one record, or several all or nothing',
    description: access,
    body: recordsInput,
    responses: {
      201: { description: 'The stored record, or the array of them when an array was sent', body: z.union([record, z.array(record)]) },
    },
  },
  {
    method: 'delete',
    path: TABLE,
    tag: 'data',
    auth: 'instanceToken',
    summary: 'Delete every record of a table',
    description: access,
    responses: { 200: { description: 'How many were deleted', body: z.object({ message: z.string(), deleted: z.int() }) } },
  },
  {
    method: 'get',
    path: '/api/v2.6/data-grants',
    tag: 'data',
    auth: 'instanceToken',
    summary: "A user account's data grants",
    description: 'Owner only.',
    query: grantQuery,
    responses: { 200: { description: 'The grants', body: z.array(grantBody) } },
  },
  {
    method: 'post',
    path: '/api/v2.6/data-grants',
    tag: 'data',
    auth: 'instanceToken',
    summary: 'Let a plain user account read or write a table (or a whole namespace with endpoint "*")',
    description: 'Owner only.',
    body: grantSchema,
    responses: { 201: { description: 'The grant', body: grantBody } },
  },
  {
    method: 'delete',
    path: '/api/v2.6/data-grants',
    tag: 'data',
    auth: 'instanceToken',
    summary: 'Revoke a data grant',
    description: 'Owner only.',
    body: grantSchema,
    responses: { 200: { description: 'Revoked', body: grantBody.extend({ message: z.string() }) } },
  },
];
