// The gateway's route table, in the order both dispatchers try them. Each feature declares its own
// routes (its routes.ts); this joins them. The OpenAPI document is made from the same table.
import { healthRoutes, openApiRoute, type RateLimit } from '@pds/http';
import { type Logger, type ReadinessCheck } from '@pds/runtime';
import type { LocalBlobStore } from '@pds/storage';
import type { DexPushService } from './apps/dex-push';
import { applicationRoutes } from './apps/routes';
import type { ApplicationService } from './apps/service';
import { accountRoutes } from './auth/account-routes';
import type { LoginService } from './auth/login';
import type { PasswordService } from './auth/password-service';
import { authRoutes } from './auth/routes';
import type { AuthService } from './auth/service';
import type { TotpService } from './auth/totp';
import { blobRoutes } from './blobs/routes';
import type { ConsolePages } from './console';
import { combinatorRoutes } from './data/combinator-routes';
import type { CombinatorService } from './data/combinators';
import { debitRoutes } from './data/debit-routes';
import type { BundleService } from './data/bundles';
import type { DebitService } from './data/debits';
import { dataGrantRoutes } from './data/grant-routes';
import type { DataGrantService } from './data/grants';
import { dataRoutes } from './data/routes';
import type { DataService } from './data/service';
import type { ArchiveService } from './files/archive';
import type { ActivityService } from './events/activity';
import { eventRoutes } from './events/routes';
import type { EventStreams } from './events/stream';
import { webhookRoutes } from './events/webhook-routes';
import type { WebhookService } from './events/webhooks';
import { fileRoutes } from './files/routes';
import type { FileService } from './files/service';
import type { TrashService } from './files/trash';
import { tusRoutes } from './files/tus/routes';
import type { ResumableUploads } from './files/tus/service';
import { trashRoutes } from './files/trash-routes';
import { withOlderPrefixes } from './hat/legacy-prefixes';
import { linkRoutes, type LinkRouteDeps } from './links/routes';
import type { ShareLinkService } from './links/service';
import type { LinkVisits } from './links/visits';
import type { ProfileService } from './hat/profile';
import { hatRoutes } from './hat/routes';
import { systemStatusRoutes, type SystemStatusService } from './hat/system-status';
import type { ClosingService } from './instances/closing';
import { closingRoutes } from './instances/closing-routes';
import type { InstanceRegistry } from './instances/registry';
import { gatewayOpenApi } from './openapi';
import type { GatewayRoute } from './route';
import { importIdOf } from './portability/keys';
import { portabilityRoutes } from './portability/routes';
import type { PortabilityService } from './portability/service';
import { signupRoutes } from './signup/routes';
import type { SignupService } from './signup/service';
import { userRoutes } from './users/routes';
import type { UserService } from './users/service';

/** What the routes' handlers call. */
export interface RouteServices {
  readiness: Record<string, ReadinessCheck>;
  signup: SignupService;
  signupLimit: RateLimit;
  /** The sign-up name check's own counter. */
  signupCheckLimit: RateLimit;
  registry: InstanceRegistry;
  auth: AuthService;
  logins: LoginService;
  passwords: PasswordService;
  totp: TotpService;
  pages: ConsolePages | undefined;
  /** The local store, whose signed addresses the gateway serves; none with S3 (the store serves them). */
  localStore: LocalBlobStore | undefined;
  files: FileService;
  /** Resumable (tus) uploads, and the largest one (MAX_UPLOAD_BYTES) their OPTIONS announces. */
  resumable: ResumableUploads;
  maxUploadBytes: number;
  archives: ArchiveService;
  trash: TrashService;
  links: ShareLinkService;
  linkVisits: LinkVisits;
  /** How a link's address is served: its page's CSP, absolute addresses, cookies. */
  linkAddress: Omit<LinkRouteDeps, 'registry' | 'logger'>;
  portability: PortabilityService;
  users: UserService;
  closing: ClosingService;
  apps: ApplicationService;
  push: DexPushService;
  data: DataService;
  grants: DataGrantService;
  debits: DebitService;
  bundles: BundleService;
  combinators: CombinatorService;
  profiles: ProfileService;
  systemStatus: SystemStatusService;
  streams: EventStreams;
  activity: ActivityService;
  webhooks: WebhookService;
  logger: Logger;
}

/** Every route, with the older API prefixes the original served some of them under (hat/legacy-prefixes.ts). */
export function routeTable(s: RouteServices): GatewayRoute[] {
  const routes: GatewayRoute[] = [
    ...healthRoutes('public', s.readiness),
    openApiRoute('public', () => gatewayOpenApi()),
    ...signupRoutes(s.signup, s.registry, s.auth, { signup: s.signupLimit, check: s.signupCheckLimit }),
    ...authRoutes(s.auth, s.logins, s.pages),
    ...accountRoutes(s.auth, s.passwords, s.totp),
    ...(s.localStore ? blobRoutes(s.localStore, uploadTargets(s)) : []),
    ...userRoutes(s.users),
    ...closingRoutes(s.closing),
    ...applicationRoutes(s.apps, s.push),
    ...dataRoutes(s.data),
    ...dataGrantRoutes(s.grants),
    ...debitRoutes(s.debits, s.bundles),
    ...combinatorRoutes(s.combinators),
    ...fileRoutes(s.files, s.archives),
    ...tusRoutes(s.resumable, s.maxUploadBytes),
    ...trashRoutes(s.trash),
    ...linkRoutes(s.links, s.linkVisits, { ...s.linkAddress, registry: s.registry, logger: s.logger }),
    ...portabilityRoutes(s.portability),
    ...hatRoutes(s.profiles, s.logger),
    ...systemStatusRoutes(s.systemStatus),
    ...eventRoutes(s.streams, s.activity),
    ...webhookRoutes(s.webhooks),
  ];
  return withOlderPrefixes(routes);
}

/** What a signed upload address may write: an import's archive (its own key shape), else a file's bytes. */
function uploadTargets(s: RouteServices): Parameters<typeof blobRoutes>[1] {
  return {
    acceptsUpload: (tenant, key) => (importIdOf(key) ? s.portability.acceptsUpload(tenant, key) : s.files.acceptsUpload(tenant, key)),
  };
}

/**
 * The declarations alone, every route included (the local store's addresses too), for the document:
 * their handlers are never called, so no service stands behind them.
 */
export function declaredRoutes(): GatewayRoute[] {
  const nothing = new Proxy({}, { get: () => undefined }) as never;
  return routeTable({ ...(nothing as RouteServices), readiness: {}, localStore: nothing });
}
