import { Router } from 'express';
import { ApiError, parseInput, type RateLimit } from '@pds/http';
import { requestHost } from '../instances/tenancy';
import type { InstanceRegistry } from '../instances/registry';
import type { AuthService } from '../auth/service';
import { signupSchema, type SignupService } from './service';

/** POST /api/signup: no auth; sent to the cluster domain or to the would-be instance address. */
export function signupRoutes(signup: SignupService, registry: InstanceRegistry, auth: AuthService, limit: RateLimit): Router {
  const router = Router();
  router.post('/api/signup', async (req, res) => {
    // Counted before any work: each sign-up costs an RSA key pair, a password hash and rows.
    const client = req.ip ?? 'unknown';
    await limit.consume(client);
    const input = parseInput(signupSchema, req.body ?? {});
    const address = signup.addressFor(requestHost(req), input.username);
    const { owner } = await signup.signup(address, input).catch(async (error: unknown) => {
      // A taken name is refused after one look-up, before the costly part: not counted, so asking again
      // (a walkthrough run twice) never uses up the limit.
      if (error instanceof ApiError && error.status === 409) await limit.refund(client);
      throw error;
    });
    // A gateway may still hold an earlier instance of this address (deleted, then signed up again).
    await registry.changed(address);
    const tenant = await registry.resolve(address);
    if (!tenant) throw new Error(`instance ${address} vanished right after sign-up`);
    res.status(201).json({ instance: address, userId: owner.id, accessToken: await auth.issue(tenant, owner) });
  });
  return router;
}
