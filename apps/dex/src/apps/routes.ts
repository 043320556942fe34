import { z } from 'zod';
import { appRecordSchema } from '@pds/app-record';
import { json } from '@pds/http';
import { route, type DexRoute } from '../route';
import type { AppUpdateService } from './service';

/** POST update-application (admin token in x-auth-token); also under /api/v3 like registerHat. */
export function appRoutes(apps: AppUpdateService): DexRoute[] {
  return [
    route({
      method: 'post',
      path: ['/api/users/update-application', '/api/v3/users/update-application'],
      access: 'admin',
      tag: 'applications',
      summary: 'Certify an application record and queue its push to the target instances',
      description:
        "Dex administrators only: the X-Auth-Token is the owner token of an instance listed in DEX_ADMINS. Pushes are delivered asynchronously by dex's worker.",
      // Read by hand in the service (parseCluster, the hatFilter check), so these only document them.
      documents: {
        query: z.object({
          hatFilter: z.string().describe('An instance address, or * for every registered instance of the cluster'),
          cluster: z.string().describe('The certified cluster domain'),
        }),
        body: appRecordSchema,
      },
      responses: {
        202: {
          description: 'The new version and the instances it is queued for',
          body: z.object({ message: z.string(), targets: z.array(z.string()) }),
        },
      },
      // An administrator's action like the console's, in the same audit (a refused caller's too).
      audit: {
        action: 'application.update',
        // The app's id as the record gives it (its namespace by default).
        target: ({ body }) => {
          const record = body as { id?: unknown; namespace?: unknown } | undefined;
          return textOf(record?.id ?? record?.namespace);
        },
        details: ({ query }) => {
          const { hatFilter, cluster } = query as Record<string, unknown>;
          return { hatFilter: textOf(hatFilter), cluster: textOf(cluster) };
        },
      },
      handle: async ({ caller, query, body }) =>
        json(await apps.update(caller, { hatFilter: query.hatFilter, cluster: query.cluster, record: body }), 202),
    }),
  ];
}

const textOf = (value: unknown) => (typeof value === 'string' ? value.slice(0, 253) : undefined);
