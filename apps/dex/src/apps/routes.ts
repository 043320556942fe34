import { Router } from 'express';
import type { InstanceTokenVerifier } from '../auth';
import type { AppUpdateService } from './service';

/** POST update-application (admin token in x-auth-token); also under /api/v3 like registerHat. */
export function appRoutes(apps: AppUpdateService, verifier: InstanceTokenVerifier): Router {
  const router = Router();
  router.post(['/api/users/update-application', '/api/v3/users/update-application'], async (req, res) => {
    const caller = await verifier.verify(req.get('x-auth-token'));
    const result = await apps.update(caller, { hatFilter: req.query.hatFilter, cluster: req.query.cluster, record: req.body });
    res.status(202).json(result);
  });
  return router;
}
