// Wiring of the web console: where its build is, which origins its CSP allows.
import { consoleDist } from '@pds/console';
import { instanceUrl, type Config } from '@pds/config';
import type { ApplicationRepository } from '@pds/db';
import type { TrustProxy } from '@pds/http';
import type { Logger } from '@pds/runtime';
import { blobOriginOf, originOf } from '@pds/http';
import { consoleBuilt, ConsolePages } from './routes';

export { ConsolePages, wantsPage } from './routes';

/** Undefined when the console has not been built (`pnpm build`): the gateway then serves the API alone. */
export function consolePages(
  config: Config,
  apps: ApplicationRepository,
  trust: TrustProxy,
  logger: Logger,
  instanceExists: (address: string) => Promise<boolean>,
  dist = consoleDist(),
): ConsolePages | undefined {
  if (!consoleBuilt(dist)) {
    logger.warn({ dist }, 'web console not built (run pnpm build): serving the API only');
    return undefined;
  }
  return new ConsolePages({
    dist,
    clusterDomain: config.CLUSTER_DOMAIN,
    signupUrl: `${instanceUrl(config, config.CLUSTER_DOMAIN)}/`,
    trust,
    instanceExists,
    blobOrigin: blobOriginOf(config),
    logoOrigins: async (instanceId: string) =>
      (await apps.list(instanceId)).flatMap((app) => originOf((app.record as { logoUrl?: string }).logoUrl ?? '') ?? []),
  });
}
