// GET /healthz (the process answers) and GET /readyz (what it depends on answers). Mounted before
// tenancy and auth, so they answer on any Host, for load balancers and orchestrators.
import { z } from 'zod';
import { describeFailures, runChecks, type ReadinessCheck } from '@pds/runtime';
import { json, type RouteDef } from './routing/route';

const NO_STORE = { 'Cache-Control': 'no-store' };

/** The two probes as declared routes; `access` is the application's word for "any Host, no token". */
export function healthRoutes<A extends string>(access: A, checks: Record<string, ReadinessCheck>): RouteDef<A>[] {
  return [
    {
      method: 'get',
      path: '/healthz',
      access,
      tag: 'meta',
      summary: 'The process is alive (any Host, no token)',
      responses: { 200: { description: 'Alive', body: z.object({ status: z.literal('ok') }) } },
      handle: async () => json({ status: 'ok' }, 200, NO_STORE),
    },
    {
      method: 'get',
      path: '/readyz',
      access,
      tag: 'meta',
      summary: 'PostgreSQL, Redis and the store answer and the migrations are applied (any Host, no token)',
      responses: {
        200: {
          description: 'Ready, with each check',
          body: z.object({ status: z.literal('ready'), checks: z.record(z.string(), z.literal('ok')) }),
        },
        503: {
          description: 'Not ready: the message and `checks` name what is down',
          body: z.object({ error: z.string(), message: z.string(), checks: z.record(z.string(), z.string()) }),
        },
      },
      handle: async () => {
        const results = await runChecks(checks);
        const problem = describeFailures(results);
        if (!problem) return json({ status: 'ready', checks: results }, 200, NO_STORE);
        return json({ error: 'Service Unavailable', message: `Not ready: ${problem}`, checks: results }, 503, NO_STORE);
      },
    },
  ];
}
