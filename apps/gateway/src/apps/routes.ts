import { Router } from 'express';
import { z } from 'zod';
import { parseInput } from '@pds/http';
import { callerOf, ownerOf, tenantOf } from '../context';
import type { ApplicationService } from './service';

const BASE = '/api/v2.6/applications';

const redirectQuery = z.object({ redirect: z.string().min(1).max(4096) });

/** The owner's view of the apps on the instance (paths and GET forms as the original's clients call them). */
export function applicationRoutes(apps: ApplicationService): Router {
  const router = Router();

  router.get(BASE, async (req, res) => {
    res.json(await apps.list(tenantOf(req), callerOf(req)));
  });

  router.get(`${BASE}/:appId`, async (req, res) => {
    res.json(await apps.get(tenantOf(req), callerOf(req), { appId: req.params.appId as string }));
  });

  for (const method of ['get', 'post'] as const) {
    router[method](`${BASE}/:appId/setup`, async (req, res) => {
      res.json(await apps.setUp(tenantOf(req), callerOf(req), { appId: req.params.appId as string }));
    });
    router[method](`${BASE}/:appId/disable`, async (req, res) => {
      res.json(await apps.disable(tenantOf(req), callerOf(req), { appId: req.params.appId as string }));
    });
  }

  router.get(`${BASE}/:appId/access-token`, async (req, res) => {
    res.json(await apps.accessToken(tenantOf(req), callerOf(req), { appId: req.params.appId as string }));
  });

  // The login page's last step: the app token and the address to send it to, refused for a redirect
  // outside the app's own origins (the page must not hand a token to whoever wrote the link).
  router.get(`${BASE}/:appId/hatlogin`, async (req, res) => {
    // Who before what: anyone but the owner is refused before the query is judged.
    const caller = ownerOf(req);
    const { redirect } = parseInput(redirectQuery, req.query, 'query');
    res.json(await apps.loginRedirect(tenantOf(req), caller, { appId: req.params.appId as string, redirect }));
  });

  return router;
}
