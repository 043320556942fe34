// Dex's route table; the OpenAPI document is made from the same declarations.
import type { AuditRepository } from '@pds/db';
import { CONSOLE_NOT_BUILT, healthRoutes, json, openApiDocument, openApiRoute, text, type RateLimit, type Reply } from '@pds/http';
import { type ReadinessCheck } from '@pds/runtime';
import { consoleRoutes } from './admin/routes';
import type { DexConsoleService } from './admin/service';
import { appRoutes } from './apps/routes';
import type { AppUpdateService } from './apps/service';
import { registrationRoutes } from './registration/routes';
import type { RetirementService } from './registration/retirement';
import type { RegistrationService } from './registration/service';
import { describeAccess, route, type DexRoute } from './route';

export interface DexRouteServices {
  readiness: Record<string, ReadinessCheck>;
  publicKeyPem: string;
  registration: RegistrationService;
  retirement: RetirementService;
  registerLimit: RateLimit;
  apps: AppUpdateService;
  console: DexConsoleService;
  audit: AuditRepository;
  /** The administrators' console page (dex.html), or none when the console is not built. */
  consolePage?: () => Promise<Reply>;
}

export function dexRouteTable(s: DexRouteServices): DexRoute[] {
  return [
    ...healthRoutes('public', s.readiness),
    route({
      method: 'get',
      path: '/publickey',
      access: 'public',
      tag: 'meta',
      summary: "Dex's RSA public key (PEM) that verifies its app-push tokens",
      responses: { 200: { description: 'PEM', contentType: 'text/plain' } },
      handle: async () => text('text/plain; charset=utf-8', s.publicKeyPem),
    }),
    openApiRoute('public', dexOpenApi),
    route({
      method: 'get',
      path: '/',
      access: 'public',
      tag: 'console',
      hidden: true,
      summary: 'The administrators’ console (a page for browsers)',
      responses: { 200: { description: 'The page', contentType: 'text/html' } },
      handle: () => (s.consolePage ? s.consolePage() : Promise.resolve(json(CONSOLE_NOT_BUILT, 404))),
    }),
    ...registrationRoutes(s.registration, s.retirement, s.registerLimit),
    ...appRoutes(s.apps),
    ...consoleRoutes(s.console, s.audit),
  ];
}

let built: Record<string, unknown> | undefined;

/** Built once per process, from the declarations alone (their handlers are never called for it). */
export function dexOpenApi(): Record<string, unknown> {
  const nothing = new Proxy({}, { get: () => undefined }) as never;
  return (built ??= openApiDocument(
    {
      title: 'PDS dex',
      version: '3',
      description: 'The exchange: instance registration and certified applications. Errors are `{error, message}`.',
    },
    dexRouteTable({ ...(nothing as DexRouteServices), readiness: {} }),
    describeAccess,
  ));
}
