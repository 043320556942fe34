// Bundles (owner only) and data debits: the owner manages them, the holder reads the values. Bodies
// are checked in debits.ts and bundle-input.ts; the bundle body is the zod schema they validate with.
import { z } from 'zod';
import { json } from '@pds/http';
import { route, type GatewayRoute } from '../route';
import { debitValuesRead } from '../events/read-notes';
import { bundleSchema } from './bundle-input';
import type { BundleService } from './bundles';
import type { DebitService } from './debits';

const BUNDLE = '/api/v2.6/data-bundle/:name';
const DEBIT = '/api/v2.6/data-debit';
const tag = 'data debits';
const debit = z.looseObject({ dataDebitKey: z.string() }).describe('A data debit in the original system’s shape');
const oneDebit = { 200: { description: 'The debit', body: debit } };
const values = z.record(z.string(), z.unknown()).describe('Each bundle property name → its records');
const bundleParams = z.object({ name: z.string() });
const debitParams = z.object({ key: z.string() });
const HOLDER = 'The owner, or the debit’s holder.';
const OWNER = 'Owner only.';

export function debitRoutes(debits: DebitService, bundles: BundleService): GatewayRoute[] {
  return [
    route({
      method: 'post',
      path: BUNDLE,
      access: 'token',
      tag,
      summary: 'Store a bundle: named selections of tables with filters',
      description: OWNER,
      params: bundleParams,
      documents: { body: bundleSchema },
      responses: { 201: { description: 'The bundle', body: z.unknown() } },
      handle: async ({ tenant, caller, params, body }) => json(await bundles.define(tenant, caller, { ...params, body }), 201),
    }),
    route({
      method: 'get',
      path: BUNDLE,
      access: 'token',
      tag,
      summary: "A bundle's current values",
      description: OWNER,
      params: bundleParams,
      responses: { 200: { description: 'The values', body: values } },
      handle: async ({ tenant, caller, params }) => json(await bundles.values(tenant, caller, params)),
    }),
    route({
      method: 'get',
      path: `${BUNDLE}/structure`,
      access: 'token',
      tag,
      summary: "A bundle's structure",
      description: OWNER,
      params: bundleParams,
      responses: { 200: { description: 'The bundle', body: z.unknown() } },
      handle: async ({ tenant, caller, params }) => json(await bundles.structure(tenant, caller, params)),
    }),
    route({
      method: 'get',
      path: DEBIT,
      access: 'token',
      tag,
      summary: 'Every data debit of the instance',
      description: OWNER,
      responses: { 200: { description: 'The debits', body: z.array(debit) } },
      handle: async ({ tenant, caller }) => json(await debits.list(tenant, caller)),
    }),
    route({
      method: 'get',
      path: `${DEBIT}/:key`,
      access: 'token',
      tag,
      summary: 'One data debit',
      description: HOLDER,
      params: debitParams,
      responses: oneDebit,
      handle: async ({ tenant, caller, params }) => json(await debits.get(tenant, caller, params)),
    }),
    route({
      method: 'post',
      path: `${DEBIT}/:key`,
      access: 'token',
      tag,
      summary: 'Register a data debit over a bundle',
      description: OWNER,
      params: debitParams,
      documents: { body: z.unknown() },
      responses: { 201: { description: 'The debit', body: debit } },
      handle: async ({ tenant, caller, params, body }) => json(await debits.register(tenant, caller, { ...params, body }), 201),
    }),
    route({
      method: 'put',
      path: `${DEBIT}/:key`,
      access: 'token',
      tag,
      summary: 'Change a data debit (a new bundle or period)',
      description: OWNER,
      params: debitParams,
      documents: { body: z.unknown() },
      responses: oneDebit,
      handle: async ({ tenant, caller, params, body }) => json(await debits.update(tenant, caller, { ...params, body })),
    }),
    route({
      method: 'get',
      path: `${DEBIT}/:key/enable`,
      access: 'token',
      tag,
      summary: 'Enable a data debit',
      description: OWNER,
      params: debitParams,
      responses: oneDebit,
      handle: async ({ tenant, caller, params }) => json(await debits.enable(tenant, caller, params)),
    }),
    route({
      method: 'get',
      path: `${DEBIT}/:key/disable`,
      access: 'token',
      tag,
      summary: 'Disable a data debit, now or at the end of its period',
      description: OWNER,
      params: debitParams,
      documents: { query: z.object({ atPeriodEnd: z.enum(['true', 'false']).optional() }) },
      responses: oneDebit,
      handle: async ({ tenant, caller, params, query }) =>
        json(await debits.disable(tenant, caller, { ...params, atPeriodEnd: query.atPeriodEnd === 'true' })),
    }),
    route({
      method: 'get',
      path: `${DEBIT}/:key/values`,
      access: 'token',
      tag,
      summary: "The debit's bundle values, while the debit is active",
      description: HOLDER,
      params: debitParams,
      responses: { 200: { description: 'The values', body: z.looseObject({ bundle: values }) } },
      read: debitValuesRead,
      handle: async ({ tenant, caller, params }) => json(await debits.values(tenant, caller, params)),
    }),
  ];
}
