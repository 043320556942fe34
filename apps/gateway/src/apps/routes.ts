import { Router } from 'express';
import { z } from 'zod';
import { ApiError, parseInput } from '@pds/http';
import type { AuthService } from '../auth/service';
import { callerOf, isOwner, ownerOf, tenantOf } from '../context';
import type { ApplicationService } from './service';

const BASE = '/api/v2.6/applications';

/** The owner's view of the apps on the instance (paths and GET forms as the original's clients call them). */
export function applicationRoutes(apps: ApplicationService, auth: AuthService): Router {
  const router = Router();

  router.get(BASE, async (req, res) => {
    ownerOf(req);
    res.json(await apps.list(tenantOf(req).instance.id));
  });

  // The owner, or the app itself (an app may ask whether it is still enabled).
  router.get(`${BASE}/:appId`, async (req, res) => {
    const caller = callerOf(req);
    const appId = req.params.appId as string;
    if (!isOwner(caller) && caller.claims.application !== appId) throw ApiError.forbidden();
    const instanceId = tenantOf(req).instance.id;
    res.json(await apps.status(instanceId, await apps.get(instanceId, appId)));
  });

  for (const method of ['get', 'post'] as const) {
    router[method](`${BASE}/:appId/setup`, async (req, res) => {
      ownerOf(req);
      const instanceId = tenantOf(req).instance.id;
      res.json(await apps.status(instanceId, await apps.setUp(instanceId, req.params.appId as string)));
    });
    router[method](`${BASE}/:appId/disable`, async (req, res) => {
      ownerOf(req);
      const instanceId = tenantOf(req).instance.id;
      res.json(await apps.status(instanceId, await apps.disable(instanceId, req.params.appId as string)));
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

  // The login page's last step: the app token and the address to send it to, refused for a redirect
  // outside the app's own origins (the page must not hand a token to whoever wrote the link).
  router.get(`${BASE}/:appId/hatlogin`, async (req, res) => {
    ownerOf(req);
    const tenant = tenantOf(req);
    const appId = req.params.appId as string;
    const { redirect } = parseInput(z.object({ redirect: z.string().min(1).max(4096) }), req.query, 'query');
    const login = await apps.loginRedirect(tenant.instance.id, appId, redirect);
    const accessToken = auth.issue(tenant, login.user, { application: appId });
    login.redirect.searchParams.set('token', accessToken);
    res.json({ accessToken, userId: login.user.id, redirect: login.redirect.toString() });
  });

  return router;
}
