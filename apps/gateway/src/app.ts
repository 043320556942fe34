// Builds the gateway's express app from its dependencies; main.ts wires real ones, tests their own.
import type { Express } from 'express';
import type { Redis } from 'ioredis';
import { instanceUrl, type Config } from '@pds/config';
import { ApplicationRepository, FileRepository, InstanceRepository, UserRepository, type GatewayDb } from '@pds/db';
import {
  createBaseApp,
  finishApp,
  healthRoutes,
  OPENAPI_PATH,
  openApiRoutes,
  RateLimit,
  scoped,
  serveHotRoutes,
  type Logger,
  type Metrics,
} from '@pds/http';
import { BLOB_ROUTE, LocalBlobStore, type BlobStore } from '@pds/storage';
import { type Clock, systemClock, VerifiedTokenCache } from '@pds/tokens';
import { AccountCache } from './auth/accounts';
import { LoginService } from './auth/login';
import { authenticate } from './auth/middleware';
import { authRoutes } from './auth/routes';
import { AuthService } from './auth/service';
import { applicationsFeature, HttpDexKeySource, type DexKeySource } from './apps';
import { blobRoutes } from './blobs/routes';
import { consoleFeature } from './console';
import { instanceCors } from './cors';
import { DATA_PATHS, dataFeature, debitService } from './data';
import { FILES_PATH, fileRoutes } from './files/routes';
import { FileService } from './files/service';
import { Invalidation } from './instances/invalidation';
import { InstanceRegistry } from './instances/registry';
import { hotRoutes } from './hot-routes';
import { gatewayOpenApi } from './openapi';
import { gatewayReadiness } from './readiness';
import { resolveTenant } from './instances/tenancy';
import { signupRoutes } from './signup/routes';
import { SignupService, type DexRegistrationQueue, type SignupInput } from './signup/service';
import { userRoutes } from './users/routes';
import { UserService } from './users/service';

export interface GatewayDeps {
  config: Config;
  db: GatewayDb;
  redis: Redis;
  logger: Logger;
  masterKey: Buffer;
  dexRegistration: DexRegistrationQueue;
  /** Where file bytes live (local disk or S3); see @pds/storage. */
  blobStore: BlobStore;
  clock?: Clock;
  /** Prefix of this gateway's own Redis keys (rate limits); lets test files share one Redis. */
  redisPrefix?: string;
  /**
   * A Redis connection of its own (the caller opens and closes it) on which the gateways of a cluster
   * hear of changed instances and accounts. Without it nothing is heard, so cached instances and
   * accounts are trusted for one second only.
   */
  subscriber?: Redis;
  /** Dex's public key for app pushes; by default fetched from `${DEX_URL}/publickey`. */
  dexKeys?: DexKeySource;
  /** Request and cache metrics (served on METRICS_PORT by server.ts); none in tests that do not ask. */
  metrics?: Metrics;
}

export interface Gateway {
  app: Express;
  registry: InstanceRegistry;
  auth: AuthService;
  /**
   * Creates an instance for the operator, outside public sign-up (so reserved names such as `admin`
   * are allowed); does nothing when it exists. Returns its address and whether it was created.
   */
  provision(owner: Omit<SignupInput, 'passRepeat'>): Promise<{ address: string; created: boolean }>;
}

export function createApp(deps: GatewayDeps): Gateway {
  const { config, db, logger } = deps;
  const clock = deps.clock ?? systemClock;
  // One cluster's gateways share QUEUE_PREFIX; other clusters on the same Redis keep their own counts and channels.
  const redisPrefix = deps.redisPrefix ?? config.QUEUE_PREFIX;
  const invalidation = new Invalidation(deps.redis, deps.subscriber, `${redisPrefix}:invalidate`, logger);
  const instances = new InstanceRepository(db);
  const accounts = new AccountCache(new UserRepository(db), new ApplicationRepository(db), invalidation, {
    stats: deps.metrics?.cache('accounts'),
  });
  const users = new UserRepository(db, accounts.changed);
  const registry = new InstanceRegistry(instances, deps.masterKey, invalidation, { stats: deps.metrics?.cache('instance-registry') });
  const auth = new AuthService(users, accounts, new VerifiedTokenCache(undefined, deps.metrics?.cache('verified-token')), clock, (tenant) =>
    registry.signingKeys(tenant),
  );
  const limiter = new RateLimit(deps.redis, {
    points: config.LOGIN_RATE_LIMIT,
    durationSeconds: config.LOGIN_RATE_WINDOW,
    keyPrefix: `${redisPrefix}:login`,
  });
  const signupLimit = new RateLimit(deps.redis, {
    points: config.SIGNUP_RATE_LIMIT,
    durationSeconds: config.SIGNUP_RATE_WINDOW,
    keyPrefix: `${redisPrefix}:signup`,
    // Sign-up needs no Redis: during an outage the instance is created and its registration reconciled later.
    whenUnavailable: 'allow',
  });
  const signup = new SignupService(instances, deps.masterKey, config.CLUSTER_DOMAIN, deps.dexRegistration, logger);

  const debits = debitService(db, clock);
  const apps = applicationsFeature(db, auth, deps.dexKeys ?? new HttpDexKeySource(config.DEX_URL, clock, logger), clock, debits, accounts);

  // Feature routers carry their routes' full paths; each is scoped to its prefixes so that a request
  // skips the others in one comparison each (see scoped()).
  const app = createBaseApp(logger, { trustProxy: config.TRUST_PROXY, rawBodyPrefixes: [BLOB_ROUTE], metrics: deps.metrics?.requests });
  // Before tenancy and auth: probes answer on any Host.
  app.use(scoped(['/healthz', '/readyz'], healthRoutes(gatewayReadiness(deps))));
  // Before tenancy: the same document for every Host.
  app.use(scoped([OPENAPI_PATH], openApiRoutes(gatewayOpenApi())));
  const webConsole = consoleFeature(config, db, logger);
  if (webConsole) app.use(webConsole.cluster);
  // Before tenancy: sign-up creates the instance its Host names.
  app.use(scoped(['/api/signup'], signupRoutes(signup, registry, auth, signupLimit)));

  app.use(resolveTenant(registry));
  // Before every instance route, blob addresses included: a browser app uploads to them too.
  app.use(instanceCors(config.CORS_ALLOWED_ORIGINS, apps.origins));
  if (webConsole) app.use(webConsole.instance);
  // The local store's signed addresses carry their own authorisation (S3 serves these itself).
  const fileRepository = new FileRepository(db);
  if (deps.blobStore instanceof LocalBlobStore) app.use(scoped([BLOB_ROUTE], blobRoutes(deps.blobStore, fileRepository)));
  // Dex pushes carry a dex service token in X-Auth-Token, which instance authentication would refuse.
  app.use(scoped(['/api/dex'], apps.pushRoutes));
  // The token routes read and judge tokens themselves (validate must say why a token is refused).
  app.use(authRoutes(auth, new LoginService(auth, limiter)));
  app.use(authenticate(auth));
  app.use(scoped(['/users/user'], userRoutes(new UserService(users))));
  app.use(scoped(['/api/v2.6/applications'], apps.routes));
  app.use(scoped(DATA_PATHS, dataFeature(db, debits)));
  const files = new FileService({
    files: fileRepository,
    users,
    store: deps.blobStore,
    clock,
    signedUrlTtl: config.SIGNED_URL_TTL,
    maxUploadBytes: config.MAX_UPLOAD_BYTES,
    baseUrl: (address) => instanceUrl(config, address),
  });
  app.use(FILES_PATH, fileRoutes(files));

  finishApp(app);
  serveHotRoutes(app, { logger, metrics: deps.metrics, routes: hotRoutes(registry, auth, files) });
  const provision: Gateway['provision'] = async (owner) => {
    const address = `${owner.username}.${config.CLUSTER_DOMAIN}`;
    if (await registry.resolve(address)) return { address, created: false };
    await signup.signup(address, { ...owner, passRepeat: owner.pass });
    return { address, created: true };
  };
  return { app, registry, auth, provision };
}
