import { Router } from 'express';
import type { RegistrationService } from './service';

/** POST registerHat, unauthenticated; also under /api/v3 where the original dex client sends it. */
export function registrationRoutes(registration: RegistrationService): Router {
  const router = Router();
  router.post(['/api/users/registerHat', '/api/v3/users/registerHat'], async (req, res) => {
    const { status, body } = await registration.register((req.body as { hatAddress?: unknown } | undefined)?.hatAddress);
    res.status(status).json(body);
  });
  return router;
}
