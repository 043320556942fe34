// The admin listener's request handler: its own route table through the shared dispatcher and
// renderer (@pds/http), express answering what no route takes (404).
import type { RequestListener } from 'node:http';
import { createBaseApp, createDispatcher, expressRoutes, finishApp, type TrustProxy } from '@pds/http';
import { type Logger } from '@pds/runtime';
import { adminOpenApi } from './openapi';
import { AdminPipeline } from './pipeline';
import { adminRoutes } from './routes';
import type { AdminService } from './service';

export function createAdminApp(admin: AdminService, options: { adminToken: string; trust: TrustProxy; logger: Logger }): RequestListener {
  const { logger } = options;
  const routes = adminRoutes(admin, adminOpenApi);
  const pipeline = new AdminPipeline(options.adminToken, options.trust);
  const app = createBaseApp(logger);
  app.use(expressRoutes(routes, pipeline, logger));
  finishApp(app, logger);
  return createDispatcher({ routes, pipeline, fallback: app, logger });
}
