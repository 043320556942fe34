import { z } from 'zod';
import { json, type RateLimit, limitedAddress } from '@pds/http';
import { route, type DexRoute } from '../route';
import type { RetirementService } from './retirement';
import type { RegistrationService } from './service';

const outcome = z.object({ message: z.string(), hatAddress: z.string() });

/**
 * POST registerHat, unauthenticated; also under /api/v3 where the original dex client sends it. POST
 * retireHat, signed by the instance's own key: its cluster erased it.
 */
export function registrationRoutes(registration: RegistrationService, retirement: RetirementService, limit: RateLimit): DexRoute[] {
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
        await limit.consume(limitedAddress(client.ip));
        const { status, body: answer } = await registration.register({
          hatAddress: (body as { hatAddress?: unknown } | undefined)?.hatAddress,
        });
        return json(answer, status);
      },
    }),
    route({
      method: 'post',
      path: '/api/v3/users/retireHat',
      access: 'public',
      tag: 'registration',
      summary: 'Retire an erased instance: dex forgets its key and never registers the address again',
      description:
        'Called by the instance’s cluster once it has erased the instance. X-Auth-Token: a service token (RS256, at most a few minutes) ' +
        'signed with the instance’s own key, `iss` the instance address, `aud` "dex", `scope` "instance-retire". ' +
        'Idempotent: a retired address answers 200 again.',
      headers: [{ name: 'X-Auth-Token', description: 'The service token signed with the instance key', required: true }],
      responses: {
        200: { description: 'Retired (now or before)', body: z.object({ message: z.literal('Retired'), hatAddress: z.string() }) },
        401: { description: 'No token, or one the instance’s stored key does not verify' },
        404: { description: 'Dex never held a key for this address: there is nothing to forget' },
      },
      // Judged by the service, not the pipeline: a retired address has no key left to check a token with.
      handle: async ({ req }) => json(await retirement.retire(req.headers['x-auth-token'] as string | undefined)),
    }),
  ];
}
