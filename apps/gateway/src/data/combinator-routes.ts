// Combinators: `POST /api/v2.6/combinator/:name` stores endpoint queries, `GET` runs them (owner only).
import { z } from 'zod';
import { json } from '@pds/http';
import { route, type GatewayRoute } from '../route';
import { combinatorSchema } from './bundle-input';
import type { CombinatorService } from './combinators';
import { listQuery } from './input';
import { recordBody } from './routes';

// The name may span path segments (`locations/ios`), as the original's did.
const PATH = '/api/v2.6/combinator/*name';
const tag = 'data';
const params = z.object({ name: z.array(z.string()).transform((segments) => segments.join('/')) });

export function combinatorRoutes(combinators: CombinatorService): GatewayRoute[] {
  return [
    route({
      method: 'post',
      path: PATH,
      access: 'owner',
      tag,
      summary: "Store a combinator: endpoint queries with the bundles' filters, run later by name",
      params,
      documents: { body: combinatorSchema },
      responses: { 201: { description: 'Stored (again: replaced)', body: z.object({ message: z.string() }) } },
      async handle({ tenant, caller, params, body }) {
        await combinators.define(tenant, caller, { name: params.name, body });
        return json({ message: `Combinator ${params.name} registered` }, 201);
      },
    }),
    route({
      method: 'get',
      path: PATH,
      access: 'owner',
      tag,
      summary: "A combinator's records now, ordered and paged",
      description: 'Without orderBy: in insertion order. At most 1,000 records per call.',
      params,
      query: listQuery,
      responses: { 200: { description: 'The records', body: z.array(recordBody) } },
      handle: async ({ tenant, caller, params, query }) => json(await combinators.values(tenant, caller, { name: params.name, query })),
    }),
  ];
}
