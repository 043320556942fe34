// POST /api/signup: no auth; sent to the cluster domain or to the would-be instance address.
import { z } from 'zod';
import { ApiError, json, parseInput, type RateLimit } from '@pds/http';
import type { AuthService } from '../auth/service';
import type { InstanceRegistry } from '../instances/registry';
import { addressOfHost } from '../instances/tenancy';
import { route, type GatewayRoute } from '../route';
import { signupSchema, type SignupService } from './service';

export function signupRoutes(signup: SignupService, registry: InstanceRegistry, auth: AuthService, limit: RateLimit): GatewayRoute[] {
  return [
    route({
      method: 'post',
      path: '/api/signup',
      access: 'public',
      tag: 'sign-up',
      summary: 'Create an instance and its owner account',
      description: 'Sent to the cluster domain or to the would-be instance address; the instance is `<username>.<cluster domain>`.',
      // Counted before the body is judged: each sign-up costs an RSA key pair, a password hash and rows.
      documents: { body: signupSchema },
      responses: {
        201: {
          description: 'The instance, its owner and an owner token',
          body: z.object({ instance: z.string(), userId: z.uuid(), accessToken: z.string() }),
        },
        409: { description: 'The username is taken' },
      },
      async handle({ client, body }) {
        await limit.consume(client.ip);
        const input = parseInput(signupSchema, body ?? {});
        const address = signup.addressFor(addressOfHost(client.host), input.username);
        const { owner } = await signup.signup(address, input).catch(async (error: unknown) => {
          // A taken name is refused after one look-up, before the costly part: not counted, so asking again
          // (a walkthrough run twice) never uses up the limit.
          if (error instanceof ApiError && error.status === 409) await limit.refund(client.ip);
          throw error;
        });
        // A gateway may still hold an earlier instance of this address (deleted, then signed up again).
        await registry.changed(address);
        const tenant = await registry.resolve(address);
        if (!tenant) throw new Error(`instance ${address} vanished right after sign-up`);
        return json({ instance: address, userId: owner.id, accessToken: await auth.issue(tenant, owner) }, 201);
      },
    }),
  ];
}
