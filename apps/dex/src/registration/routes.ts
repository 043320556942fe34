import { Router } from 'express';
import type { RateLimit } from '@pds/http';
import type { RegistrationService } from './service';

/** POST registerHat, unauthenticated; also under /api/v3 where the original dex client sends it. */
export function registrationRoutes(registration: RegistrationService, limit: RateLimit): Router {
  const router = Router();
  router.post(['/api/users/registerHat', '/api/v3/users/registerHat'], async (req, res) => {
    // No authentication by the spec: the per-client limit bounds what one caller can make dex fetch and store.
    await limit.consume(req.ip ?? 'unknown');
    const { status, body } = await registration.register({ hatAddress: (req.body as { hatAddress?: unknown } | undefined)?.hatAddress });
    res.status(status).json(body);
  });
  return router;
}
