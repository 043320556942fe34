// OpenAPI description of bundles and data debits (see @pds/http openapi.ts). Bodies are checked in
// debits.ts and bundle-input.ts; the bundle body is the zod schema they validate with.
import { z } from 'zod';
import type { ApiOperation } from '@pds/http';
import { bundleSchema } from './bundle-input';

const BUNDLE = '/api/v2.6/data-bundle/:name';
const DEBIT = '/api/v2.6/data-debit';
const debit = z.looseObject({ dataDebitKey: z.string() }).describe('A data debit in the original system’s shape');
const op = (
  method: ApiOperation['method'],
  path: string,
  summary: string,
  responses: ApiOperation['responses'],
  extra: Partial<ApiOperation> = {},
): ApiOperation => ({
  method,
  path,
  tag: 'data debits',
  auth: 'instanceToken',
  summary,
  description: 'Owner only.',
  responses,
  ...extra,
});
const values = z.record(z.string(), z.unknown()).describe('Each bundle property name → its records');

export const debitApi: ApiOperation[] = [
  op(
    'post',
    BUNDLE,
    'Store a bundle: named selections of tables with filters',
    { 201: { description: 'The bundle', body: z.unknown() } },
    { body: bundleSchema },
  ),
  op('get', BUNDLE, "A bundle's current values", { 200: { description: 'The values', body: values } }),
  op('get', `${BUNDLE}/structure`, "A bundle's structure", { 200: { description: 'The bundle', body: z.unknown() } }),
  op('get', DEBIT, 'Every data debit of the instance', { 200: { description: 'The debits', body: z.array(debit) } }),
  op(
    'get',
    `${DEBIT}/:key`,
    'One data debit',
    { 200: { description: 'The debit', body: debit } },
    { description: 'The owner, or the debit’s holder.' },
  ),
  op(
    'post',
    `${DEBIT}/:key`,
    'Register a data debit over a bundle',
    { 201: { description: 'The debit', body: debit } },
    { body: z.unknown() },
  ),
  op(
    'put',
    `${DEBIT}/:key`,
    'Change a data debit (a new bundle or period)',
    { 200: { description: 'The debit', body: debit } },
    { body: z.unknown() },
  ),
  op('get', `${DEBIT}/:key/enable`, 'Enable a data debit', { 200: { description: 'The debit', body: debit } }),
  op(
    'get',
    `${DEBIT}/:key/disable`,
    'Disable a data debit, now or at the end of its period',
    { 200: { description: 'The debit', body: debit } },
    { query: z.object({ atPeriodEnd: z.enum(['true', 'false']).optional() }) },
  ),
  op(
    'get',
    `${DEBIT}/:key/values`,
    "The debit's bundle values, while the debit is active",
    { 200: { description: 'The values', body: z.looseObject({ bundle: values }) } },
    { description: 'The owner, or the debit’s holder.' },
  ),
];
