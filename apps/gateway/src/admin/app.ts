// The admin listener's request handler: its own route table through the shared dispatcher and
// renderer (@pds/http), the operator console's assets, and express answering what no route takes (404).
import type { RequestListener } from 'node:http';
import {
  Audit,
  ConsoleLogIn,
  ConsoleSessions,
  createBaseApp,
  createDispatcher,
  expressRoutes,
  finishApp,
  RateLimit,
  staffConsole,
  trustProxy,
} from '@pds/http';
import {
  AuditRepository,
  ConsoleSessionRepository,
  InstanceAdminRepository,
  OperatorRepository,
  UsageRepository,
  type GatewayDb,
} from '@pds/db';
import type { Logger, Metrics } from '@pds/runtime';
import type { QueueInspector, ProcessPresence } from '@pds/queue';
import type { RedisClient } from '@pds/queue';
import type { Clock } from '@pds/tokens';
import { ClusterService } from './cluster';
import { adminOpenApi } from './openapi';
import { OperatorService } from './operators';
import { AdminPipeline, adminTokenCheck } from './pipeline';
import { adminRoutes } from './routes';
import type { AdminService } from './service';

export interface AdminAppDeps {
  db: GatewayDb;
  redis: RedisClient;
  admin: AdminService;
  queues: QueueInspector;
  processes: () => Promise<ProcessPresence[]>;
  adminToken: string;
  logger: Logger;
  clock: Clock;
  /** STORAGE, for the cluster's page. */
  store: string;
  loginLimit: { points: number; durationSeconds: number; keyPrefix: string };
  /** The built console (apps/console/dist), whose operator.html the listener serves at `/`. */
  consoleDist?: string;
  metrics?: Metrics;
}

export const OPERATOR_COOKIE = 'pds_operator';
/** The operator console's page in the console's build. */
export const OPERATOR_PAGE = 'operator.html';

export function createAdminApp(deps: AdminAppDeps): RequestListener {
  const { logger, clock } = deps;
  const audit = new AuditRepository(deps.db);
  const auditLog = new Audit(audit, clock, logger);
  const sessionRows = new ConsoleSessionRepository(deps.db);
  const sessions = new ConsoleSessions(sessionRows, OPERATOR_COOKIE, clock);
  const isAdminToken = adminTokenCheck(deps.adminToken);
  const operators = new OperatorService(
    new OperatorRepository(deps.db),
    sessionRows,
    sessions,
    new ConsoleLogIn(sessions, auditLog, new RateLimit(deps.redis, deps.loginLimit)),
    isAdminToken,
    clock,
  );
  const cluster = new ClusterService(
    new InstanceAdminRepository(deps.db),
    new UsageRepository(deps.db),
    deps.queues,
    deps.processes,
    deps.store,
  );
  const built = staffConsole(deps.consoleDist, OPERATOR_PAGE);
  const routes = adminRoutes({ admin: deps.admin, operators, cluster, audit, page: built?.page }, adminOpenApi);
  // The admin listener is never behind the cluster's proxy (compose and k8s route no traffic to it): a
  // forwarded header here is the caller's own claim, so the audit and the operators' log-in limit see the peer.
  const trust = trustProxy(0);
  const pipeline = new AdminPipeline(isAdminToken, trust, sessions, auditLog);
  const app = createBaseApp(logger, { trust });
  app.use(expressRoutes(routes, pipeline, logger));
  if (built) app.use('/assets', built.assets);
  finishApp(app, logger);
  return createDispatcher({ routes, pipeline, fallback: app, logger, metrics: deps.metrics, trust });
}
