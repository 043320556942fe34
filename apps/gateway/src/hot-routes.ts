// The gateway's most frequent reads, answered in front of express when they are plain GETs that
// succeed (serveHotRoutes in @pds/http says what is handed over, and why). Each calls the same
// services, with the same tenancy and authentication, as its express route in auth/routes.ts and
// files/routes.ts; anything the lane does not answer itself, those routes answer.
// apps/gateway/test/hot-routes.test.ts checks each answer against express's, header for header.
import type { IncomingMessage } from 'node:http';
import type { HotAnswer, HotRoute } from '@pds/http';
import type { Caller } from './context';
import type { AuthService } from './auth/service';
import { viewerOf } from './files/access';
import { FILES_PATH } from './files/routes';
import type { FileService } from './files/service';
import type { InstanceRegistry, ResolvedInstance } from './instances/registry';
import { addressOfHost } from './instances/tenancy';

/** A file id that needs no percent-decoding; any other goes to express, which decodes and checks it. */
const FILE_ID = '([A-Za-z0-9._~-]+)';
const FILES = FILES_PATH.replace(/\./g, '\\.');

const json = (body: unknown, headers: [string, string][] = []): HotAnswer => ({
  status: 200,
  headers,
  body: { type: 'application/json; charset=utf-8', text: JSON.stringify(body) },
});

export function hotRoutes(registry: InstanceRegistry, auth: AuthService, files: FileService): HotRoute[] {
  const tenantOf = (req: IncomingMessage): Promise<ResolvedInstance | null> =>
    req.headers.host ? registry.resolve(addressOfHost(req.headers.host)) : Promise.resolve(null);
  const tokenOf = (req: IncomingMessage): string | undefined => (req.headers['x-auth-token'] as string | undefined) || undefined;

  /**
   * The instance and, when a token came, the caller with the refreshed token's header (a refused token
   * throws: express answers the 401); undefined for a host that is no instance.
   */
  async function contextOf(
    req: IncomingMessage,
  ): Promise<{ tenant: ResolvedInstance; caller?: Caller; headers: [string, string][] } | undefined> {
    const tenant = await tenantOf(req);
    if (!tenant) return undefined;
    const token = tokenOf(req);
    if (!token) return { tenant, headers: [] };
    const caller = await auth.authenticate(tenant, token);
    const fresh = await auth.refreshed(tenant, caller);
    return { tenant, caller, headers: fresh ? [['X-Auth-Token', fresh]] : [] };
  }

  return [
    {
      route: '/users/access_token/validate',
      path: /^\/users\/access_token\/validate$/,
      async answer(req) {
        const [tenant, token] = [await tenantOf(req), tokenOf(req)];
        if (!tenant || !token) return undefined;
        await auth.authenticate(tenant, token);
        return json({ message: 'Authenticated' });
      },
    },
    {
      route: '/publickey',
      path: /^\/publickey$/,
      async answer(req) {
        const tenant = await tenantOf(req);
        return tenant ? { status: 200, body: { type: 'text/plain; charset=utf-8', text: tenant.instance.publicKeyPem } } : undefined;
      },
    },
    {
      route: `${FILES_PATH}/file/:fileId`,
      path: new RegExp(`^${FILES}/file/${FILE_ID}$`),
      async answer(req, [fileId]) {
        const context = await contextOf(req);
        if (!context?.caller) return undefined;
        return json(await files.get(context.tenant, viewerOf(context.caller), fileId as string), context.headers);
      },
    },
    {
      route: `${FILES_PATH}/content/:fileId`,
      path: new RegExp(`^${FILES}/content/${FILE_ID}$`),
      async answer(req, [fileId]) {
        const context = await contextOf(req);
        if (!context) return undefined;
        // The signed address is built from URL-safe parts (address, plain id, base64url signature), so it
        // is what express's res.location would send after encoding it.
        const address = await files.contentAddress(context.tenant, viewerOf(context.caller), fileId as string);
        return { status: 303, headers: [...context.headers, ['Location', address]] };
      },
    },
  ];
}
