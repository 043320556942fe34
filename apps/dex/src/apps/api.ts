// OpenAPI description of update-application (see @pds/http openapi.ts).
import { z } from 'zod';
import { appRecordSchema } from '@pds/app-record';
import type { ApiOperation } from '@pds/http';

export const appsApi: ApiOperation[] = [
  {
    method: 'post',
    path: ['/api/users/update-application', '/api/v3/users/update-application'],
    tag: 'applications',
    auth: 'dexServiceToken',
    summary: 'Certify an application record and queue its push to the target instances',
    description:
      "Dex administrators only: the X-Auth-Token is the owner token of an instance listed in DEX_ADMINS. Pushes are delivered asynchronously by dex's worker.",
    // Read by hand in the service (parseCluster, the hatFilter check), so this object only documents them.
    query: z.object({
      hatFilter: z.string().describe('An instance address, or * for every registered instance of the cluster'),
      cluster: z.string().describe('The certified cluster domain'),
    }),
    body: appRecordSchema,
    responses: {
      202: {
        description: 'The new version and the instances it is queued for',
        body: z.object({ message: z.string(), targets: z.array(z.string()) }),
      },
    },
  },
];
