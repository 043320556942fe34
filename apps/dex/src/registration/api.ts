// OpenAPI description of registerHat (see @pds/http openapi.ts).
import { z } from 'zod';
import type { ApiOperation } from '@pds/http';

const outcome = z.object({ message: z.string(), hatAddress: z.string() });

export const registrationApi: ApiOperation[] = [
  {
    method: 'post',
    path: ['/api/users/registerHat', '/api/v3/users/registerHat'],
    tag: 'registration',
    auth: 'none',
    summary: 'Register an instance address under a certified cluster; dex fetches its public key',
    // parseInstanceAddress checks the address by hand (domain rules), so this object only documents it.
    body: z.object({ hatAddress: z.string().describe('The instance address, e.g. alice.pds.example') }),
    responses: {
      200: { description: 'Registered: the key was fetched', body: outcome },
      202: { description: 'Pending: the key fetch is still retrying', body: outcome },
      409: { description: 'The instance serves a different key than the one registered; an administrator must re-certify it' },
    },
  },
];
