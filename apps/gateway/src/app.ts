// The gateway's composition root: every repository and service built once from its dependencies, the
// route table joined in order, and the two dispatchers over it. main.ts wires real dependencies, tests
// their own.
import type { RequestListener } from 'node:http';
import type { Express, Request } from 'express';
import type { RedisClient } from '@pds/queue';
import { instanceUrl, type Config } from '@pds/config';
import {
  ApplicationRepository,
  DataBundleRepository,
  DataChangeRepository,
  DataDebitRepository,
  DataGrantRepository,
  DataRecordRepository,
  DataCombinatorRepository,
  EventRepository,
  FileRepository,
  FileUploadRepository,
  InstanceAdminRepository,
  UsageRepository,
  PortabilityRepository,
  InstanceRepository,
  PasswordResetRepository,
  ReadRouting,
  ShareLinkRepository,
  TotpRepository,
  UserRepository,
  WebhookRepository,
  type GatewayDb,
} from '@pds/db';
import { AccountLimit, clientOf, createBaseApp, createDispatcher, expressRoutes, finishApp, RateLimit, trustProxy } from '@pds/http';
import { type Logger, type Metrics } from '@pds/runtime';
import { GATEWAY_QUEUES, QueueInspector, runningProcesses } from '@pds/queue';
import { consoleDist } from '@pds/console';
import { LocalBlobStore, type BlobStore } from '@pds/storage';
import { type Clock, systemClock, VerifiedTokenCache } from '@pds/tokens';
import { createAdminApp } from './admin/app';
import { clusterTotals } from './admin/metrics';
import { showGatewayJob } from './admin/cluster';
import { AdminService } from './admin/service';
import { HttpDexKeySource, type DexKeySource } from './apps/dex-keys';
import { DexPushService } from './apps/dex-push';
import { ApplicationService } from './apps/service';
import { AccountCache } from './auth/accounts';
import { LoginService } from './auth/login';
import { PasswordService } from './auth/password-service';
import { AuthService } from './auth/service';
import { TotpService } from './auth/totp';
import { consolePages } from './console';
import { blobOriginOf } from '@pds/http';
import { Cors } from './cors';
import { DataAccessPolicy } from './data/access';
import { BundleService } from './data/bundles';
import { CombinatorService } from './data/combinators';
import { DebitService } from './data/debits';
import { DataGrantService } from './data/grants';
import { DataService } from './data/service';
import { ActivityService } from './events/activity';
import { EventFeed } from './events/feed';
import { ReadLog } from './events/reads';
import { EventStreams } from './events/stream';
import { EventVisibility } from './events/visibility';
import { WebhookService } from './events/webhooks';
import { ArchiveService } from './files/archive';
import { RedisArchiveSelections } from './files/archive-selections';
import { FileService } from './files/service';
import { TrashService } from './files/trash';
import { ResumableUploads } from './files/tus/service';
import { TUS_PATH } from './files/tus/routes';
import { SystemStatusService } from './hat/system-status';
import { UnlockProofs } from './links/secrets';
import { ShareLinkService } from './links/service';
import { LinkVisits } from './links/visits';
import { ProfileService } from './hat/profile';
import { PortabilityService, type PortabilityQueues } from './portability/service';
import type { ThumbnailQueue } from './files/thumbnails';
import { ClosingService } from './instances/closing';
import { Invalidation } from './instances/invalidation';
import { SharedRecentWrites } from './instances/recent-writes';
import { InstanceRegistry } from './instances/registry';
import { Mailer, type MailQueue } from './mail/mailer';
import { addressOfHost } from './instances/tenancy';
import { GatewayPipeline } from './pipeline';
import { gatewayReadiness } from './readiness';
import type { GatewayRoute } from './route';
import { routeTable } from './routes';
import { SignupService, type DexRegistrationQueue } from './signup/service';
import { UserService } from './users/service';

export interface GatewayDeps {
  config: Config;
  db: GatewayDb;
  redis: RedisClient;
  logger: Logger;
  masterKey: Buffer;
  dexRegistration: DexRegistrationQueue;
  /** Where mail goes (the worker sends it); without it password resets and other mail answer 503. */
  mail?: MailQueue;
  /** Where completed images are sent for a thumbnail (the worker makes them); without it none are made. */
  thumbnails?: ThumbnailQueue;
  /** Where export and import jobs are asked for (the worker runs them); without them neither starts (503). */
  portability?: PortabilityQueues;
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
  subscriber?: RedisClient;
  /** Dex's public key for app pushes; by default fetched from `${DEX_URL}/publickey`. */
  dexKeys?: DexKeySource;
  /** Request and cache metrics (served on METRICS_PORT by server.ts); none in tests that do not ask. */
  metrics?: Metrics;
}

export interface Gateway {
  /** The request listener: the fast dispatcher over the route table, express for everything else. */
  app: RequestListener;
  /** The same routes served by express alone (and the pages and assets the dispatcher hands it). */
  express: Express;
  /** Every route, in the order both dispatchers try them. */
  routes: readonly GatewayRoute[];
  /** The operator's admin API (served on ADMIN_PORT by server.ts); none without ADMIN_TOKEN. */
  admin: RequestListener | undefined;
  registry: InstanceRegistry;
  auth: AuthService;
  signup: SignupService;
  /** The mail port: any feature queues a message with `mail.enqueue({ to, subject, text, html })`. */
  mail: Mailer;
  /** Ends the open event streams (at shutdown: they would hold the server open). */
  endStreams(): void;
  /** Ends the streams and writes the reads still waiting; after the server has closed. */
  close(): Promise<void>;
}

export function createApp(deps: GatewayDeps): Gateway {
  const { config, db, logger } = deps;
  const clock = deps.clock ?? systemClock;
  // One cluster's gateways share QUEUE_PREFIX; other clusters on the same Redis keep their own counts and channels.
  const redisPrefix = deps.redisPrefix ?? config.QUEUE_PREFIX;
  const trust = trustProxy(config.TRUST_PROXY);
  const invalidation = new Invalidation(deps.redis, deps.subscriber, `${redisPrefix}:invalidate`, logger);
  const accountsChanged = (instanceId: string) => invalidation.publish({ kind: 'accounts', instanceId });

  // Searches, listings and bundles read a replica when there is one (DATABASE_REPLICA_URL), except
  // right after a write of the same instance.
  const windowMs = config.DATABASE_REPLICA_WINDOW * 1000;
  const reads = new ReadRouting(db, db.replica && new SharedRecentWrites(deps.redis, `${redisPrefix}:replica`, windowMs, logger));

  // Every repository, once.
  const instances = new InstanceRepository(db);
  const users = new UserRepository(db, accountsChanged);
  const applications = new ApplicationRepository(db, accountsChanged);
  const quotas = { bytes: config.QUOTA_BYTES, recordsBytes: config.QUOTA_RECORDS_BYTES };
  const files = new FileRepository(db, reads, quotas);
  const records = new DataRecordRepository(db, reads, quotas);
  const changes = new DataChangeRepository(db, reads, quotas);
  const usage = new UsageRepository(db);
  const grants = new DataGrantRepository(db, accountsChanged);

  const accounts = new AccountCache(users, applications, grants, invalidation, { stats: deps.metrics?.cache('accounts') });
  const registry = new InstanceRegistry(instances, deps.masterKey, invalidation, { stats: deps.metrics?.cache('instance-registry') });
  const verified = new VerifiedTokenCache(undefined, deps.metrics?.cache('verified-token'));
  const auth = new AuthService(
    users,
    accounts,
    verified,
    clock,
    (tenant) => registry.signingKeys(tenant),
    (instanceId, at) => instances.touchActivity(instanceId, at),
  );
  const loginLimit = new RateLimit(deps.redis, {
    points: config.LOGIN_RATE_LIMIT,
    durationSeconds: config.LOGIN_RATE_WINDOW,
    keyPrefix: `${redisPrefix}:login`,
  });
  // Failed log-ins per account, from every address together; and failed reset links per instance.
  const accountLimit = (keyPrefix: string) =>
    new AccountLimit(deps.redis, { points: config.LOGIN_ACCOUNT_LIMIT, durationSeconds: config.LOGIN_ACCOUNT_WINDOW, keyPrefix });
  const totp = new TotpService(new TotpRepository(db), users, deps.masterKey, clock, loginLimit);
  const logins = new LoginService(auth, { client: loginLimit, account: accountLimit(`${redisPrefix}:login-account`) }, totp);
  const mail = new Mailer(deps.mail);
  const passwords = new PasswordService(users, new PasswordResetRepository(db, accountsChanged), auth, mail, clock, {
    confirmClient: new RateLimit(deps.redis, {
      points: config.LOGIN_RATE_LIMIT,
      durationSeconds: config.LOGIN_RATE_WINDOW,
      keyPrefix: `${redisPrefix}:reset-confirm`,
    }),
    confirmAccount: accountLimit(`${redisPrefix}:reset-confirm-account`),
    client: new RateLimit(deps.redis, {
      points: config.RESET_RATE_LIMIT,
      durationSeconds: config.RESET_RATE_WINDOW,
      keyPrefix: `${redisPrefix}:reset`,
    }),
    // One instance may be asked for from many addresses; its owner's mailbox is what this protects.
    instance: new RateLimit(deps.redis, {
      points: config.RESET_RATE_LIMIT * 10,
      durationSeconds: config.RESET_RATE_WINDOW,
      keyPrefix: `${redisPrefix}:reset-instance`,
    }),
  });
  const signupLimit = new RateLimit(deps.redis, {
    points: config.SIGNUP_RATE_LIMIT,
    durationSeconds: config.SIGNUP_RATE_WINDOW,
    keyPrefix: `${redisPrefix}:signup`,
    // Sign-up needs no Redis: during an outage the instance is created and its registration reconciled later.
    whenUnavailable: 'allow',
  });
  // A person may try a few names per sign-up: the check counts on its own, ten times as many per window.
  const signupCheckLimit = new RateLimit(deps.redis, {
    points: config.SIGNUP_RATE_LIMIT * 10,
    durationSeconds: config.SIGNUP_RATE_WINDOW,
    keyPrefix: `${redisPrefix}:signup-check`,
    whenUnavailable: 'allow',
  });
  const signup = new SignupService(instances, deps.masterKey, config.CLUSTER_DOMAIN, deps.dexRegistration, logger);
  const dataAccess = new DataAccessPolicy(accounts);
  const bundles = new BundleService(new DataBundleRepository(db, reads));
  const debits = new DebitService(bundles, new DataDebitRepository(db), users, dataAccess, clock);
  const apps = new ApplicationService(applications, users, debits, changes, auth);
  const push = new DexPushService(applications, deps.dexKeys ?? new HttpDexKeySource(config.DEX_URL, clock, logger), clock);
  const resumable = new ResumableUploads({
    files,
    uploads: new FileUploadRepository(db, reads, quotas),
    store: deps.blobStore,
    instanceNow: (address) => registry.resolve(address),
    clock,
    maxUploadBytes: config.MAX_UPLOAD_BYTES,
    uploadDeadline: config.UPLOAD_DEADLINE,
    uploadUrl: (address, token) => `${instanceUrl(config, address)}${TUS_PATH}/${token}`,
    logger,
  });
  const fileService = new FileService({
    files,
    users,
    resumable,
    store: deps.blobStore,
    clock,
    signedUrlTtl: config.SIGNED_URL_TTL,
    maxUploadBytes: config.MAX_UPLOAD_BYTES,
    baseUrl: (address) => instanceUrl(config, address),
    thumbnails: deps.thumbnails,
    logger,
  });
  const archives = new ArchiveService({
    files,
    store: deps.blobStore,
    selections: new RedisArchiveSelections(deps.redis, redisPrefix),
    clock,
    signedUrlTtl: config.SIGNED_URL_TTL,
    baseUrl: (address) => instanceUrl(config, address),
  });
  const events = new EventRepository(db, reads);
  const readLog = new ReadLog(events, logger);
  const shareLinks = new ShareLinkRepository(db, reads);
  const linkVisits = new LinkVisits({
    links: shareLinks,
    store: deps.blobStore,
    archives,
    reads: readLog,
    proofs: new UnlockProofs(deps.masterKey),
    // A link's password is guessed as an account's would be: the login limits' numbers, on counters of their own.
    passwordLimits: {
      client: new RateLimit(deps.redis, {
        points: config.LOGIN_RATE_LIMIT,
        durationSeconds: config.LOGIN_RATE_WINDOW,
        keyPrefix: `${redisPrefix}:link-password`,
      }),
      link: accountLimit(`${redisPrefix}:link-password-any`),
    },
    clock,
    signedUrlTtl: config.SIGNED_URL_TTL,
    baseUrl: (address) => instanceUrl(config, address),
  });
  const feed = new EventFeed(events, logger);
  const streams = new EventStreams({
    events,
    visibility: new EventVisibility(db, accounts),
    feed,
    logger,
    heartbeatMs: config.EVENTS_HEARTBEAT * 1000,
  });
  const instanceAdmin = new InstanceAdminRepository(db);
  const closing = new ClosingService({
    instances: instanceAdmin,
    registry,
    users,
    passwordLimit: loginLimit,
    clock,
    graceDays: config.INSTANCE_CLOSE_GRACE_DAYS,
  });
  const portability = new PortabilityService({
    repository: new PortabilityRepository(db, reads),
    store: deps.blobStore,
    queues: deps.portability,
    clock,
    signedUrlTtl: config.SIGNED_URL_TTL,
    importMaxBytes: config.IMPORT_MAX_BYTES,
    baseUrl: (address) => instanceUrl(config, address),
  });
  const pages = consolePages(config, applications, trust, logger, async (address) => (await registry.resolve(address)) !== null);

  const routes = routeTable({
    readiness: gatewayReadiness(deps),
    signup,
    signupLimit,
    signupCheckLimit,
    registry,
    auth,
    logins,
    passwords,
    totp,
    pages,
    localStore: deps.blobStore instanceof LocalBlobStore ? deps.blobStore : undefined,
    files: fileService,
    resumable,
    maxUploadBytes: config.MAX_UPLOAD_BYTES,
    archives,
    trash: new TrashService({ files, store: deps.blobStore, clock }),
    links: new ShareLinkService({ links: shareLinks, files, clock, baseUrl: (address) => instanceUrl(config, address) }),
    linkVisits,
    linkAddress: {
      blobOrigin: blobOriginOf(config),
      baseUrl: (address) => instanceUrl(config, address),
      secureCookies: config.PUBLIC_URL_SCHEME === 'https',
    },
    portability,
    users: new UserService(users),
    closing,
    apps,
    push,
    data: new DataService(records, changes, dataAccess),
    grants: new DataGrantService(grants, users),
    debits,
    bundles,
    combinators: new CombinatorService(new DataCombinatorRepository(db), bundles, clock),
    profiles: new ProfileService(bundles, records, clock),
    systemStatus: new SystemStatusService(usage, quotas, clock),
    streams,
    activity: new ActivityService(events),
    webhooks: new WebhookService(new WebhookRepository(db), applications, events, clock),
    logger,
  });

  const cors = new Cors(config.CORS_ALLOWED_ORIGINS, (instanceId) => apps.origins(instanceId));
  const pipeline = new GatewayPipeline({
    registry,
    auth,
    cors,
    trust,
    clusterDomain: config.CLUSTER_DOMAIN,
    pages: pages !== undefined,
    verifyDexToken: (tenant, token) => push.verifyToken(tenant, token),
    reads: readLog,
  });

  const app = createBaseApp(logger, { metrics: deps.metrics, trust });
  // Preflights (no route answers OPTIONS): an allowed origin gets its 204 before express's own answer.
  app.options(/.*/, async (req, res, next) => {
    const tenant = await pipeline.tenant(addressOfRequest(req));
    if (!(await cors.preflight(req, res, tenant))) next();
  });
  app.use(expressRoutes(routes, pipeline, logger));
  if (pages) app.use(pages.express());
  // What no route took: an unknown host is still a 404 for the host, and a browser app still sees its CORS headers.
  app.use(async (req, res, next) => {
    const address = addressOfRequest(req);
    if (address !== config.CLUSTER_DOMAIN) await cors.apply(req, res, await pipeline.tenant(address));
    next();
  });
  finishApp(app, logger);

  const dispatcher = createDispatcher({ routes, pipeline, fallback: app, logger, metrics: deps.metrics, trust });

  if (deps.metrics) clusterTotals(deps.metrics, instanceAdmin, usage, quotas, db, config.STORAGE === 'local' ? config.DATA_DIR : undefined);
  // The operator's view of the gateway worker's queues (a few idle Queue objects; only the admin listener reads them).
  const queueOptions = { connection: deps.redis, prefix: redisPrefix };
  const queues = config.ADMIN_TOKEN ? new QueueInspector(GATEWAY_QUEUES, queueOptions, showGatewayJob) : undefined;
  const admin =
    config.ADMIN_TOKEN && queues
      ? createAdminApp({
          db,
          redis: deps.redis,
          admin: new AdminService(instanceAdmin, usage, registry, closing, quotas, clock),
          queues,
          processes: () => runningProcesses(deps.redis, redisPrefix),
          adminToken: config.ADMIN_TOKEN,
          logger,
          clock,
          store: config.STORAGE,
          loginLimit: {
            points: config.LOGIN_RATE_LIMIT,
            durationSeconds: config.LOGIN_RATE_WINDOW,
            keyPrefix: `${redisPrefix}:operator-login`,
          },
          consoleDist: consoleDist(),
          metrics: deps.metrics,
        })
      : undefined;
  const endStreams = () => {
    streams.endAll();
    feed.stop();
  };
  const close = async () => {
    endStreams();
    await readLog.close();
    await queues?.close();
  };
  return { app: dispatcher, express: app, routes, admin, registry, auth, signup, mail, endStreams, close };

  function addressOfRequest(req: Request): string {
    return addressOfHost(clientOf(req, trust).host);
  }
}
