// Wiring of the data tables and the owner's grants of them.
import { Router } from 'express';
import { DataGrantRepository, DataRecordRepository, DataTableRepository, UserRepository, type GatewayDb } from '@pds/db';
import { DataAccessPolicy } from './access';
import { dataBrowseRoutes } from './browse-routes';
import { dataGrantRoutes } from './grant-routes';
import { dataRoutes } from './routes';
import { DataService } from './service';

export function dataFeature(db: GatewayDb): Router {
  const grants = new DataGrantRepository(db);
  const router = Router();
  router.use(dataRoutes(new DataService(new DataRecordRepository(db), new DataAccessPolicy(grants))));
  router.use(dataGrantRoutes(grants, new UserRepository(db)));
  router.use(dataBrowseRoutes(new DataTableRepository(db)));
  return router;
}
