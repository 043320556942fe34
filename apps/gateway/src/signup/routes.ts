// POST /api/signup: no auth; sent to the cluster domain or to the would-be instance address.
import { z } from 'zod';
import { ApiError, json, parseInput, type RateLimit, limitedAddress } from '@pds/http';
import type { AuthService } from '../auth/service';
import type { InstanceRegistry } from '../instances/registry';
import { addressOfHost } from '../instances/tenancy';
import { route, type GatewayRoute } from '../route';
import { signupSchema, usernameFormat, type SignupService } from './service';

export function signupRoutes(
  signup: SignupService,
  registry: InstanceRegistry,
  auth: AuthService,
  limits: { signup: RateLimit; check: RateLimit },
): GatewayRoute[] {
  const limit = limits.signup;
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
        await limit.consume(limitedAddress(client.ip));
        const input = parseInput(signupSchema, body ?? {});
        const address = signup.addressFor(addressOfHost(client.host), input.username);
        const { owner } = await signup.signup(address, input).catch(async (error: unknown) => {
          // A taken name is refused after one look-up, before the costly part: not counted, so asking again
          // (a walkthrough run twice) never uses up the limit.
          if (error instanceof ApiError && error.status === 409) await limit.refund(limitedAddress(client.ip));
          throw error;
        });
        // A gateway may still hold an earlier instance of this address (deleted, then signed up again).
        await registry.changed(address);
        const tenant = await registry.resolve(address);
        if (!tenant) throw new Error(`instance ${address} vanished right after sign-up`);
        return json({ instance: address, userId: owner.id, accessToken: await auth.issue(tenant, owner) }, 201);
      },
    }),
    route({
      method: 'get',
      path: '/api/signup/available',
      access: 'public',
      tag: 'sign-up',
      summary: 'Whether a username is free, and free ones to offer when it is not',
      description:
        'Tells what a sign-up refused with 409 would tell, and no more. Counted per client under a limit of its own (ten times the sign-up limit per window), never as a sign-up. `fullName` lets a suggestion use the last name.',
      query: z.object({ username: usernameFormat, fullName: z.string().max(256).optional() }),
      responses: {
        200: {
          description: 'Whether an instance could be signed up under the name; reserved names are not available',
          body: z.object({
            available: z.boolean(),
            suggestions: z.array(z.string()).describe('Up to three free names; none when available'),
          }),
        },
      },
      async handle({ client, query }) {
        await limits.check.consume(limitedAddress(client.ip));
        return json(await signup.availability(query.username, query.fullName));
      },
    }),
  ];
}
