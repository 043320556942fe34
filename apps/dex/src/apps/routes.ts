import { Router } from 'express';
import type { AppUpdateService } from './service';

/** POST update-application (admin token in x-auth-token); also under /api/v3 like registerHat. */
export function appRoutes(apps: AppUpdateService): Router {
  const router = Router();
  router.post(['/api/users/update-application', '/api/v3/users/update-application'], async (req, res) => {
    const result = await apps.update({
      token: req.get('x-auth-token'),
      hatFilter: req.query.hatFilter,
      cluster: req.query.cluster,
      body: req.body,
    });
    res.status(202).json(result);
  });
  return router;
}
