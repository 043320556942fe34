import { Router } from 'express';
import { ApiError } from '@pds/http';
import type { AuthService } from '../auth/service';
import { callerOf, isOwner, ownerOf, tenantOf } from '../context';
import { applicationView, type ApplicationService } from './service';

const BASE = '/api/v2.6/applications';

/** The owner's view of the apps on the instance (paths and GET forms as the original's clients call them). */
export function applicationRoutes(apps: ApplicationService, auth: AuthService): Router {
  const router = Router();

  router.get(BASE, async (req, res) => {
    ownerOf(req);
    res.json((await apps.list(tenantOf(req).instance.id)).map(applicationView));
  });

  // The owner, or the app itself (an app may ask whether it is still enabled).
  router.get(`${BASE}/:appId`, async (req, res) => {
    const caller = callerOf(req);
    const appId = req.params.appId as string;
    if (!isOwner(caller) && caller.claims.application !== appId) throw ApiError.forbidden();
    res.json(applicationView(await apps.get(tenantOf(req).instance.id, appId)));
  });

  for (const method of ['get', 'post'] as const) {
    router[method](`${BASE}/:appId/setup`, async (req, res) => {
      ownerOf(req);
      res.json(applicationView(await apps.setUp(tenantOf(req).instance.id, req.params.appId as string)));
    });
    router[method](`${BASE}/:appId/disable`, async (req, res) => {
      ownerOf(req);
      res.json(applicationView(await apps.disable(tenantOf(req).instance.id, req.params.appId as string)));
    });
  }

  router.get(`${BASE}/:appId/access-token`, async (req, res) => {
    ownerOf(req);
    const tenant = tenantOf(req);
    const appId = req.params.appId as string;
    const user = await apps.tokenAccount(tenant.instance.id, appId);
    // In the body only: the X-Auth-Token header carries the owner's own refreshed session.
    const accessToken = auth.issue(tenant, user, { application: appId });
    res.json({ accessToken, userId: user.id });
  });

  return router;
}
