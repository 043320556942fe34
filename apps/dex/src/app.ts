// Builds dex's request listener from its dependencies; server.ts wires real ones, tests their own.
import type { RequestListener } from 'node:http';
import type { RedisClient } from '@pds/queue';
import type { Config } from '@pds/config';
import {
  AdminRepository,
  AppRecordRepository,
  CertifiedClusterRepository,
  databaseChecks,
  RegisteredInstanceRepository,
  type DexDb,
} from '@pds/db';
import { createBaseApp, createDispatcher, expressRoutes, finishApp, RateLimit, trustProxy } from '@pds/http';
import { type Logger, type Metrics } from '@pds/runtime';
import type { Producer, QueueEvents } from '@pds/queue';
import { type Clock, publicKeyPem, type SigningKeys } from '@pds/tokens';
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
}

export function createDexApp(deps: DexDeps): { app: RequestListener; routes: readonly DexRoute[] } {
  const { logger } = deps;
  const clusters = new CertifiedClusterRepository(deps.db);
  const instances = new RegisteredInstanceRepository(deps.db);
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
    apps: new AppUpdateService(new AdminRepository(deps.db), clusters, instances, new AppRecordRepository(deps.db), deps.appPush),
  });
  const pipeline = new DexPipeline(
    new InstanceTokenVerifier(instances, deps.clock ?? (() => new Date())),
    trustProxy(deps.config.TRUST_PROXY),
  );
  const app = createBaseApp(logger, { metrics: deps.metrics });
  app.use(expressRoutes(routes, pipeline, logger));
  finishApp(app, logger);
  return { app: createDispatcher({ routes, pipeline, fallback: app, logger, metrics: deps.metrics }), routes };
}
