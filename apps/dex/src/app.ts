// Builds dex's express app from its dependencies; server.ts wires real ones, tests their own.
import type { Express } from 'express';
import type { Redis } from 'ioredis';
import type { Config } from '@pds/config';
import {
  AdminRepository,
  AppRecordRepository,
  CertifiedClusterRepository,
  databaseChecks,
  RegisteredInstanceRepository,
  type DexDb,
} from '@pds/db';
import { createBaseApp, finishApp, healthRoutes, openApiRoutes, RateLimit, type Logger, type Metrics } from '@pds/http';
import type { Producer, QueueEvents } from '@pds/queue';
import { type Clock, publicKeyPem, type SigningKeys } from '@pds/tokens';
import { appRoutes } from './apps/routes';
import { AppUpdateService } from './apps/service';
import { InstanceTokenVerifier } from './auth';
import { dexOpenApi } from './openapi';
import { registrationRoutes } from './registration/routes';
import { RegistrationService } from './registration/service';

export interface DexDeps {
  config: Config;
  db: DexDb;
  /** For /readyz, and registerHat's per-client limit (keys under the queue prefix). */
  redis: Redis;
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

export function createDexApp(deps: DexDeps): { app: Express } {
  const clusters = new CertifiedClusterRepository(deps.db);
  const instances = new RegisteredInstanceRepository(deps.db);
  const registration = new RegistrationService(clusters, instances, deps.keyFetch, deps.keyFetchEvents, deps.registerWaitMs ?? 5000);
  const verifier = new InstanceTokenVerifier(instances, deps.clock ?? (() => new Date()));
  const apps = new AppUpdateService(new AdminRepository(deps.db), clusters, instances, new AppRecordRepository(deps.db), deps.appPush);
  const publicKey = publicKeyPem(deps.keys.publicKey);

  const app = createBaseApp(deps.logger, { trustProxy: deps.config.TRUST_PROXY, metrics: deps.metrics?.requests });
  // Probes answer on any Host, before any other route.
  app.use(healthRoutes({ ...databaseChecks('dex', deps.db), redis: async () => void (await deps.redis.ping()) }));
  app.get('/publickey', (_req, res) => {
    res.type('text/plain').send(publicKey);
  });
  app.use(openApiRoutes(dexOpenApi()));
  const registerLimit = new RateLimit(deps.redis, {
    points: deps.config.REGISTER_RATE_LIMIT,
    durationSeconds: deps.config.REGISTER_RATE_WINDOW,
    keyPrefix: `${deps.config.QUEUE_PREFIX}:register`,
  });
  app.use(registrationRoutes(registration, registerLimit));
  app.use(appRoutes(apps, verifier));
  finishApp(app);
  return { app };
}
