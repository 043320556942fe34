// Builds dex's request listener from its dependencies; server.ts wires real ones, tests their own.
import type { RequestListener } from 'node:http';
import type { RedisClient } from '@pds/queue';
import type { Config } from '@pds/config';
import {
  AdminRepository,
  AppRecordRepository,
  AuditRepository,
  CertifiedClusterRepository,
  ConsoleSessionRepository,
  databaseChecks,
  RegisteredInstanceRepository,
  type DexDb,
} from '@pds/db';
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
import { type Logger, type Metrics } from '@pds/runtime';
import { QueueInspector, type Producer, type QueueEvents } from '@pds/queue';
import { type Clock, publicKeyPem, type SigningKeys } from '@pds/tokens';
import { DexConsoleService } from './admin/service';
import { AppUpdateService } from './apps/service';
import { InstanceTokenVerifier } from './auth';
import { RetirementService } from './registration/retirement';
import { RegistrationService } from './registration/service';
import { DexPipeline, type DexRoute } from './route';
import { dexRouteTable } from './routes';

export interface DexDeps {
  config: Config;
  db: DexDb;
  /** For /readyz, and registerHat's per-client limit (keys under the queue prefix). */
  redis: RedisClient;
  logger: Logger;
  keys: SigningKeys;
  keyFetch: Producer<'dex-key-fetch'>;
  keyFetchEvents: QueueEvents;
  appPush: Producer<'app-push'>;
  clock?: Clock;
  metrics?: Metrics;
  /** How long registerHat waits for the key fetch before answering 202 (default 5 s). */
  registerWaitMs?: number;
  /** The built web console (apps/console/dist), whose dex.html dex serves at `/`; none: no console. */
  consoleDist?: string;
}

/** The administrators' console's session cookie. */
export const DEX_ADMIN_COOKIE = 'pds_dex_admin';
/** The administrators' console's page in the console's build. */
export const DEX_CONSOLE_PAGE = 'dex.html';

export function createDexApp(deps: DexDeps): { app: RequestListener; routes: readonly DexRoute[]; close(): Promise<void> } {
  const { logger } = deps;
  const clock = deps.clock ?? (() => new Date());
  const clusters = new CertifiedClusterRepository(deps.db);
  const instances = new RegisteredInstanceRepository(deps.db);
  const appRecords = new AppRecordRepository(deps.db);
  const verifier = new InstanceTokenVerifier(instances, clock);
  const admins = new AdminRepository(deps.db);
  const updates = new AppUpdateService(admins, clusters, instances, appRecords, deps.appPush);
  const audit = new AuditRepository(deps.db);
  const auditLog = new Audit(audit, clock, logger);
  const sessions = new ConsoleSessions(new ConsoleSessionRepository(deps.db), DEX_ADMIN_COOKIE, clock);
  // The app-push queue as the console retries its jobs (the worker runs them).
  const pushQueue = new QueueInspector(['app-push'], { connection: deps.redis, prefix: deps.config.QUEUE_PREFIX });
  const loginLimit = new RateLimit(deps.redis, {
    points: deps.config.LOGIN_RATE_LIMIT,
    durationSeconds: deps.config.LOGIN_RATE_WINDOW,
    keyPrefix: `${deps.config.QUEUE_PREFIX}:console-login`,
  });
  const consoleService = new DexConsoleService(
    updates,
    verifier,
    sessions,
    new ConsoleLogIn(sessions, auditLog, loginLimit),
    admins,
    clusters,
    instances,
    appRecords,
    deps.appPush,
    pushQueue,
  );
  const built = staffConsole(deps.consoleDist, DEX_CONSOLE_PAGE);
  const routes = dexRouteTable({
    readiness: { ...databaseChecks('dex', deps.db), redis: async () => void (await deps.redis.ping()) },
    publicKeyPem: publicKeyPem(deps.keys.publicKey),
    registration: new RegistrationService(clusters, instances, deps.keyFetch, deps.keyFetchEvents, deps.registerWaitMs ?? 5000),
    retirement: new RetirementService(instances, deps.clock ?? (() => new Date())),
    registerLimit: new RateLimit(deps.redis, {
      points: deps.config.REGISTER_RATE_LIMIT,
      durationSeconds: deps.config.REGISTER_RATE_WINDOW,
      keyPrefix: `${deps.config.QUEUE_PREFIX}:register`,
    }),
    apps: updates,
    console: consoleService,
    audit,
    consolePage: built?.page,
  });
  const trust = trustProxy(deps.config.TRUST_PROXY);
  const pipeline = new DexPipeline(verifier, trust, {
    sessions,
    requireAdmin: (caller) => updates.requireAdmin(caller),
    audit: auditLog,
  });
  const app = createBaseApp(logger, { metrics: deps.metrics, trust });
  app.use(expressRoutes(routes, pipeline, logger));
  if (built) app.use('/assets', built.assets);
  finishApp(app, logger);
  return {
    app: createDispatcher({ routes, pipeline, fallback: app, logger, metrics: deps.metrics, trust }),
    routes,
    close: () => pushQueue.close(),
  };
}
