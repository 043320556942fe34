// Owner-only: which tables a plain user account may read or write (see grants.ts).
import { z } from 'zod';
import { json } from '@pds/http';
import { route, type GatewayRoute } from '../route';
import type { DataGrantService } from './grants';
import { ENDPOINT, NAMESPACE } from './input';

export const grantSchema = z.object({
  userId: z.uuid(),
  namespace: z.string().regex(NAMESPACE, 'must be a data namespace'),
  endpoint: z.union([z.literal('*'), z.string().max(515).regex(ENDPOINT, 'must be "*" or a data endpoint')]).default('*'),
  access: z.enum(['read', 'write']),
});

export const grantQuery = z.object({ userId: z.uuid() });

const GRANTS = '/api/v2.6/data-grants';
const grantBody = z.object({ userId: z.uuid(), namespace: z.string(), endpoint: z.string(), access: z.enum(['read', 'write']) });
const tag = 'data';

export function dataGrantRoutes(grants: DataGrantService): GatewayRoute[] {
  return [
    route({
      method: 'get',
      path: GRANTS,
      access: 'owner',
      tag,
      summary: "A user account's data grants",
      query: grantQuery,
      responses: { 200: { description: 'The grants', body: z.array(grantBody) } },
      handle: async ({ tenant, caller, query }) => json(await grants.list(tenant, caller, query)),
    }),
    route({
      method: 'post',
      path: GRANTS,
      access: 'owner',
      tag,
      summary: 'Let a plain user account read or write a table (or a whole namespace with endpoint "*")',
      body: grantSchema,
      responses: { 201: { description: 'The grant', body: grantBody } },
      handle: async ({ tenant, caller, body }) => json(await grants.grant(tenant, caller, body), 201),
    }),
    route({
      method: 'delete',
      path: GRANTS,
      access: 'owner',
      tag,
      summary: 'Revoke a data grant',
      body: grantSchema,
      responses: { 200: { description: 'Revoked', body: grantBody.extend({ message: z.string() }) } },
      handle: async ({ tenant, caller, body }) => json(await grants.revoke(tenant, caller, body)),
    }),
  ];
}
