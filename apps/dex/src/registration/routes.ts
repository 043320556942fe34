import { z } from 'zod';
import { json, type RateLimit } from '@pds/http';
import { route, type DexRoute } from '../route';
import type { RegistrationService } from './service';

const outcome = z.object({ message: z.string(), hatAddress: z.string() });

/** POST registerHat, unauthenticated; also under /api/v3 where the original dex client sends it. */
export function registrationRoutes(registration: RegistrationService, limit: RateLimit): DexRoute[] {
  return [
    route({
      method: 'post',
      path: ['/api/users/registerHat', '/api/v3/users/registerHat'],
      access: 'public',
      tag: 'registration',
      summary: 'Register an instance address under a certified cluster; dex fetches its public key',
      // parseInstanceAddress checks the address by hand (domain rules), so this object only documents it.
      documents: { body: z.object({ hatAddress: z.string().describe('The instance address, e.g. alice.pds.example') }) },
      responses: {
        200: { description: 'Registered: the key was fetched', body: outcome },
        202: { description: 'Pending: the key fetch is still retrying', body: outcome },
        409: { description: 'The instance serves a different key than the one registered; an administrator must re-certify it' },
      },
      async handle({ client, body }) {
        // No authentication by the spec: the per-client limit bounds what one caller can make dex fetch and store.
        await limit.consume(client.ip);
        const { status, body: answer } = await registration.register({
          hatAddress: (body as { hatAddress?: unknown } | undefined)?.hatAddress,
        });
        return json(answer, status);
      },
    }),
  ];
}
