// Wiring of the data tables and the owner's grants of them.
import { Router } from 'express';
import { DataGrantRepository, DataRecordRepository, UserRepository, type GatewayDb } from '@pds/db';
import { DataAccessPolicy } from './access';
import { dataGrantRoutes } from './grant-routes';
import { DataGrantService } from './grants';
import { dataRoutes } from './routes';
import { DataService } from './service';

export function dataFeature(db: GatewayDb): Router {
  const grants = new DataGrantRepository(db);
  const router = Router();
  router.use(dataRoutes(new DataService(new DataRecordRepository(db), new DataAccessPolicy(grants))));
  router.use(dataGrantRoutes(new DataGrantService(grants, new UserRepository(db))));
  return router;
}
