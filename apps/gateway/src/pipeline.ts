// The gateway's request pipeline, framework-free, run by both dispatchers for every declared route:
// tenant from Host → CORS → instance state → token → caller → refreshed token → access. Each refusal is
// answered where it is found (an unknown host is a 404 before any token is read, a suspended instance a
// 423, a refused token a 401 before access).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ParsedUrlQuery } from 'node:querystring';
import { ApiError, clientOf, PASS, pathsOf, type AnyRoute, type Reply, type Pipeline, type TrustProxy } from '@pds/http';
import type { Actor } from '@pds/db';
import { TokenRefused } from '@pds/tokens';
import type { AuthService } from './auth/service';
import { wantsPage } from './console';
import { isOwner, type Caller } from './context';
import type { Cors } from './cors';
import type { InstanceRegistry, ResolvedInstance } from './instances/registry';
import { checkState, requireOpenTo } from './instances/state';
import { addressOfHost } from './instances/tenancy';
import type { ReadLog } from './events/reads';
import type { Access, Context, GatewayRoute, ReadInput } from './route';

export const TOKEN_HEADER = 'x-auth-token';

/** The token of a request: the X-Auth-Token header, or on GET the X-Auth-Token query parameter (for links such as `<img src>`). */
export function requestToken(req: IncomingMessage, query: ParsedUrlQuery): string | undefined {
  const header = req.headers[TOKEN_HEADER];
  if (typeof header === 'string' && header) return header;
  if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
  const value = query['X-Auth-Token'] ?? query['x-auth-token'];
  return typeof value === 'string' && value ? value : undefined;
}

export interface PipelineDeps {
  registry: InstanceRegistry;
  auth: AuthService;
  cors: Cors;
  trust: TrustProxy;
  clusterDomain: string;
  /** Whether the console is served: a browser at an address without an instance then gets its page for that. */
  pages: boolean;
  /** Checks a dex service token for this instance (apps/dex-push.ts); throws 401 (or 503 without dex's key). */
  verifyDexToken(tenant: ResolvedInstance, token: string | undefined): Promise<void>;
  /** Where the reads routes declare go (the owner's activity log). */
  reads: ReadLog;
}

export class GatewayPipeline implements Pipeline<Context<Access>> {
  constructor(private readonly deps: PipelineDeps) {}

  async prepare(req: IncomingMessage, res: ServerResponse, route: AnyRoute, query: ParsedUrlQuery): Promise<Context<Access> | typeof PASS> {
    const access = route.access as Access;
    const client = clientOf(req, this.deps.trust);
    if (access === 'public') return { client };
    const address = addressOfHost(client.host);
    // The cluster domain is no instance: its pages (sign-up) are served after the routes.
    if (address === this.deps.clusterDomain) return PASS;
    const tenant = address ? await this.deps.registry.resolve(address) : null;
    if (!tenant) {
      // A browser landing at an address where no instance lives: the console's page says so, after the routes.
      if (this.deps.pages && pathsOf(route).includes('/') && wantsPage(req, query)) return PASS;
      throw noInstance(address);
    }
    if (req.headers.origin) await this.deps.cors.apply(req, res, tenant);
    checkState(tenant, route as GatewayRoute);
    if (access === 'instance') return { client, tenant };
    if (access === 'dex') {
      await this.deps.verifyDexToken(tenant, req.headers[TOKEN_HEADER] as string | undefined);
      return { client, tenant };
    }
    const token = requestToken(req, query);
    if (!token) {
      requireOpenTo(tenant, undefined);
      if (access === 'anyone') return { client, tenant };
      throw ApiError.notAuthenticated();
    }
    const caller = await this.caller(tenant, token, client.ip, res);
    requireOpenTo(tenant, caller.user);
    if (access === 'owner' && !isOwner(caller)) throw ApiError.forbidden('Only the owner of this instance may do this');
    if (access === 'app' && caller.claims.accessScope !== 'application') throw ApiError.forbidden('Only an application may do this');
    return { client, tenant, caller };
  }

  /** Runs the handler, and notes the read a route declares (`read`) for the owner's activity log, answered or refused. */
  async handle(context: Context<Access>, route: AnyRoute, input: unknown): Promise<Reply | undefined> {
    const read = (route as GatewayRoute).read;
    if (!read || !('tenant' in context)) return route.handle(input);
    let reply: Reply | undefined;
    try {
      reply = await route.handle(input);
      return reply;
    } finally {
      const noted = read(input as ReadInput, reply);
      if (noted) this.deps.reads.note(context.tenant.instance.id, actorOf(context), noted);
    }
  }

  /** The instance a host names; 404 for an address that is none. */
  async tenant(address: string): Promise<ResolvedInstance> {
    const tenant = address ? await this.deps.registry.resolve(address) : null;
    if (!tenant) throw noInstance(address);
    return tenant;
  }

  /** The token's caller (a refused token is a 401, never anonymous), and its refreshed token in X-Auth-Token. */
  private async caller(tenant: ResolvedInstance, token: string, address: string, res: ServerResponse): Promise<Caller> {
    let caller: Caller;
    try {
      caller = await this.deps.auth.authenticate(tenant, token, address);
    } catch (error) {
      if (error instanceof TokenRefused) throw ApiError.notAuthenticated();
      throw error;
    }
    const fresh = await this.deps.auth.refreshed(tenant, caller);
    if (fresh) res.setHeader('X-Auth-Token', fresh);
    return caller;
  }
}

/** Who a request acts as: its caller's account, or the system when it has none (dex pushes, log-in). */
export function actorOf(context: { client: { ip: string }; caller?: Caller }): Actor {
  const user = context.caller?.user;
  return user ? { kind: user.kind, id: user.id, address: context.client.ip } : { kind: 'system', address: context.client.ip };
}

function noInstance(address: string): ApiError {
  return ApiError.notFound(`There is no instance at ${address || 'this address'}`);
}
