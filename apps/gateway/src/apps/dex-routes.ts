import { Router } from 'express';
import { z } from 'zod';
import { parseAppRecord } from '@pds/app-record';
import type { ApplicationRepository } from '@pds/db';
import { ApiError, parseInput } from '@pds/http';
import { APP_PUSH_SCOPE, type Clock, DEX_ISSUER, epochSeconds, verifyServiceToken } from '@pds/tokens';
import { tenantOf } from '../context';
import { tokenKeyId, type DexKeySource } from './dex-keys';

/** The scope dex puts in the service tokens of app pushes. */

export const pushSchema = z.object({
  version: z.number().int().min(0).max(2_147_483_647),
  record: z.unknown(),
});

/**
 * Dex → instance: `PUT /api/dex/applications/:appId` delivers a certified app record. Authenticated by
 * a dex service token, not an instance token, so this router runs before the instance authentication.
 */
export function dexPushRoutes(apps: ApplicationRepository, dexKeys: DexKeySource, clock: Clock): Router {
  const router = Router();

  router.put('/api/dex/applications/:appId', async (req, res) => {
    const tenant = tenantOf(req);
    const token = req.get('x-auth-token');
    if (!token) throw ApiError.notAuthenticated();
    const key = await dexKeys.key(tokenKeyId(token));
    if (!key) throw ApiError.unavailable('The dex public key is unavailable; retry later');
    const expected = { issuer: DEX_ISSUER, audience: tenant.instance.address, scope: APP_PUSH_SCOPE };
    if (!verifyServiceToken(token, key, expected, epochSeconds(clock))) throw ApiError.notAuthenticated();

    const { version, record: input } = parseInput(pushSchema, req.body ?? {});
    const parsed = parseAppRecord(input);
    if (!parsed.success) {
      throw ApiError.badRequest(parsed.error.issues.map((i) => `record.${i.path.join('.')}: ${i.message}`).join('; '));
    }
    const appId = req.params.appId as string;
    if (parsed.record.id !== appId) throw ApiError.badRequest(`record.id: must equal the path's app id ${appId}`);

    const stored = await apps.storePushed(tenant.instance.id, appId, parsed.record, version, clock());
    res.json({ message: stored ? 'Stored' : 'Ignored: a newer version is stored', appId, version });
  });

  return router;
}
