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

/** Where the data feature's routes live (records, batches, links, grants, bundles, debits). */
export const DATA_PATHS = [
  '/api/v2.6/data',
  '/api/v2.6/data-record',
  '/api/v2.6/data-batch',
  '/api/v2.6/data-link',
  '/api/v2.6/data-grants',
  '/api/v2.6/data-bundle',
  '/api/v2.6/data-debit',
];

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
