import { Router } from 'express';
import { z } from 'zod';
import { parseInput } from '@pds/http';
import { callerOf, tenantOf } from '../context';
import type { DataGrantService } from './grants';
import { ENDPOINT, NAMESPACE } from './input';

export const grantSchema = z.object({
  userId: z.uuid(),
  namespace: z.string().regex(NAMESPACE, 'must be a data namespace'),
  endpoint: z.union([z.literal('*'), z.string().max(515).regex(ENDPOINT, 'must be "*" or a data endpoint')]).default('*'),
  access: z.enum(['read', 'write']),
});

export const grantQuery = z.object({ userId: z.uuid() });

/** Owner-only: which tables a plain user account may read or write (see grants.ts). */
export function dataGrantRoutes(grants: DataGrantService): Router {
  const router = Router();

  router.get('/api/v2.6/data-grants', async (req, res) => {
    const input = parseInput(grantQuery, req.query, 'query');
    res.json(await grants.list(tenantOf(req), callerOf(req), input));
  });

  router.post('/api/v2.6/data-grants', async (req, res) => {
    res.status(201).json(await grants.grant(tenantOf(req), callerOf(req), parseInput(grantSchema, req.body ?? {})));
  });

  router.delete('/api/v2.6/data-grants', async (req, res) => {
    res.json(await grants.revoke(tenantOf(req), callerOf(req), parseInput(grantSchema, req.body ?? {})));
  });

  return router;
}
