import { Router } from 'express';
import { z } from 'zod';
import type { DataGrant, DataGrantRepository, UserRepository } from '@pds/db';
import { ApiError, parseInput } from '@pds/http';
import { ownerOf, tenantOf } from '../context';
import { ENDPOINT, NAMESPACE } from './input';

export const grantSchema = z.object({
  userId: z.uuid(),
  namespace: z.string().regex(NAMESPACE, 'must be a data namespace'),
  endpoint: z.union([z.literal('*'), z.string().max(515).regex(ENDPOINT, 'must be "*" or a data endpoint')]).default('*'),
  access: z.enum(['read', 'write']),
});

export const grantQuery = z.object({ userId: z.uuid() });

const grantView = ({ userId, namespace, endpoint, access }: DataGrant) => ({ userId, namespace, endpoint, access });

/**
 * Owner-only: which tables a plain user account may read or write. Apps' permission sets come from
 * their setup and are not edited here, so an app's write access stays its own namespace.
 */
export function dataGrantRoutes(grants: DataGrantRepository, users: UserRepository): Router {
  const router = Router();

  async function plainUser(instanceId: string, userId: string): Promise<void> {
    const user = await users.findById(instanceId, userId);
    if (!user) throw ApiError.notFound(`User ${userId} not found`);
    if (user.kind !== 'user') throw ApiError.badRequest(`userId: data grants are for plain user accounts, not ${user.kind} accounts`);
  }

  router.get('/api/v2.6/data-grants', async (req, res) => {
    ownerOf(req);
    const { userId } = parseInput(grantQuery, req.query, 'query');
    res.json((await grants.listFor(tenantOf(req).instance.id, userId)).map(grantView));
  });

  router.post('/api/v2.6/data-grants', async (req, res) => {
    ownerOf(req);
    const instanceId = tenantOf(req).instance.id;
    const grant = parseInput(grantSchema, req.body ?? {});
    await plainUser(instanceId, grant.userId);
    await grants.grant(instanceId, grant);
    res.status(201).json(grant);
  });

  router.delete('/api/v2.6/data-grants', async (req, res) => {
    ownerOf(req);
    const grant = parseInput(grantSchema, req.body ?? {});
    if (!(await grants.revoke(tenantOf(req).instance.id, grant))) throw ApiError.notFound('No such data grant');
    res.json({ message: 'Data grant revoked', ...grant });
  });

  return router;
}
