import { Router } from 'express';
import { tenantOf } from '../context';
import type { DexPushService } from './dex-push';

/**
 * Dex → instance: `PUT /api/dex/applications/:appId` delivers a certified app record. Authenticated by
 * a dex service token, not an instance token, so this router runs before the instance authentication.
 */
export function dexPushRoutes(push: DexPushService): Router {
  const router = Router();
  router.put('/api/dex/applications/:appId', async (req, res) => {
    res.json(await push.receive(tenantOf(req), req.get('x-auth-token'), { appId: String(req.params.appId), body: req.body }));
  });
  return router;
}
