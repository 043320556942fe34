// Wiring of the web console: where its build is, which origins its CSP allows.
import type { RequestHandler, Router } from 'express';
import { consoleDist } from '@pds/console';
import type { Config } from '@pds/config';
import { ApplicationRepository, type GatewayDb } from '@pds/db';
import type { Logger } from '@pds/http';
import { originOf } from './csp';
import { clusterConsole, consoleBuilt, instanceConsole } from './routes';

export interface ConsoleFeature {
  /** Mounted before tenancy: the bare cluster domain's sign-up page. */
  cluster: RequestHandler;
  /** Mounted after tenancy, before the API's GET /: the instance console. */
  instance: Router;
}

/** Undefined when the console has not been built (`pnpm build`): the gateway then serves the API alone. */
export function consoleFeature(config: Config, db: GatewayDb, logger: Logger, dist = consoleDist()): ConsoleFeature | undefined {
  if (!consoleBuilt(dist)) {
    logger.warn({ dist }, 'web console not built (run pnpm build): serving the API only');
    return undefined;
  }
  const apps = new ApplicationRepository(db);
  const options = {
    dist,
    clusterDomain: config.CLUSTER_DOMAIN,
    blobOrigin: config.STORAGE === 's3' && config.S3_ENDPOINT ? originOf(config.S3_ENDPOINT) : undefined,
    logoOrigins: async (instanceId: string) =>
      (await apps.list(instanceId)).flatMap((app) => originOf((app.record as { logoUrl?: string }).logoUrl ?? '') ?? []),
  };
  return { cluster: clusterConsole(options), instance: instanceConsole(options) };
}
