// Wiring of the data tables, the owner's grants of them, bundles and data debits.
import { Router } from 'express';
import {
  DataBundleRepository,
  DataChangeRepository,
  DataDebitRepository,
  DataGrantRepository,
  DataRecordRepository,
  UserRepository,
  type GatewayDb,
} from '@pds/db';
import type { Clock } from '@pds/tokens';
import { DataAccessPolicy } from './access';
import { DebitService } from './debits';
import { debitRoutes } from './debit-routes';
import { dataGrantRoutes } from './grant-routes';
import { DataGrantService } from './grants';
import { dataRoutes } from './routes';
import { DataService } from './service';

export { DebitService } from './debits';

export function dataFeature(db: GatewayDb, debits: DebitService): Router {
  const grants = new DataGrantRepository(db);
  const access = new DataAccessPolicy(grants);
  const router = Router();
  router.use(dataRoutes(new DataService(new DataRecordRepository(db), new DataChangeRepository(db), access)));
  router.use(dataGrantRoutes(new DataGrantService(grants, new UserRepository(db))));
  router.use(debitRoutes(debits));
  return router;
}

export function debitService(db: GatewayDb, clock: Clock): DebitService {
  const access = new DataAccessPolicy(new DataGrantRepository(db));
  return new DebitService(new DataBundleRepository(db), new DataDebitRepository(db), new UserRepository(db), access, clock);
}
