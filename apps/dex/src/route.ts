// Dex's words for who may call a route, its request pipeline, and `route()`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import {
  ApiError,
  clientOf,
  type AnyRoute,
  type Audit,
  type AuditNote,
  type Client,
  type ConsoleSessions,
  type DescribeAccess,
  type Pipeline,
  type Reply,
  type RouteDef,
  type RouteInput,
  type TrustProxy,
} from '@pds/http';
import type { TokenClaims } from '@pds/tokens';
import type { InstanceTokenVerifier } from './auth';

/**
 * `public`: anyone, no token; `admin`: an instance owner's token that dex verifies (the service checks it
 * is an admin's); `console`: a dex administrator, by the console's session cookie or an admin's owner token.
 */
export type Access = 'public' | 'admin' | 'console';

export type Context<A extends Access> = A extends 'admin'
  ? { client: Client; caller: TokenClaims }
  : A extends 'console'
    ? { client: Client; actor: string }
    : { client: Client };

export type DexRoute = RouteDef<Access, any, any, any, any> & { audit?: AuditNote }; // eslint-disable-line @typescript-eslint/no-explicit-any

export function route<
  A extends Access,
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(
  declaration: RouteDef<A, Context<A>, P, Q, B> & {
    audit?: AuditNote<
      RouteInput<
        Context<A>,
        P extends z.ZodType ? z.output<P> : unknown,
        Q extends z.ZodType ? z.output<Q> : unknown,
        B extends z.ZodType ? z.output<B> : unknown
      >
    >;
  },
): DexRoute {
  return declaration as DexRoute;
}

export const describeAccess: DescribeAccess = (access) =>
  access === 'admin'
    ? { auth: 'dexServiceToken' }
    : access === 'console'
      ? {
          auth: 'dexServiceToken',
          note: 'A dex administrator: the console’s session cookie (pds_dex_admin), or an administrator’s owner token.',
        }
      : { auth: 'none' };

/** Who may use dex's administrators' console: the owner of an instance dex lists as administrator. */
export type ConsoleAdmins = (caller: TokenClaims) => Promise<void>;

export class DexPipeline implements Pipeline<Context<Access>> {
  constructor(
    private readonly verifier: InstanceTokenVerifier,
    private readonly trust: TrustProxy,
    private readonly console?: { sessions: ConsoleSessions; requireAdmin: ConsoleAdmins; audit: Audit },
  ) {}

  async prepare(req: IncomingMessage, _res: ServerResponse, route: AnyRoute): Promise<Context<Access>> {
    const client = clientOf(req, this.trust);
    if (route.access === 'public') return { client };
    const token = req.headers['x-auth-token'] as string | undefined;
    if (route.access === 'admin') return { client, caller: await this.verifier.verify(token) };
    if (!this.console) throw ApiError.notFound('There is no administrators’ console here');
    if (token) {
      const caller = await this.verifier.verify(token);
      await this.console.requireAdmin(caller);
      return { client, actor: caller.iss };
    }
    const session = await this.console.sessions.current(req, client);
    if (!session) throw ApiError.notAuthenticated('Log in to the console, or send an administrator’s token in X-Auth-Token');
    return { client, actor: session.actor };
  }

  handle(
    context: Context<Access>,
    route: AnyRoute,
    input: RouteInput<Context<Access>, unknown, unknown, unknown>,
  ): Promise<Reply | undefined> {
    const note = (route as DexRoute).audit;
    // Who acted: the console's administrator, or the instance whose token an admin route verified.
    const actor = 'actor' in context ? context.actor : 'caller' in context ? context.caller.iss : undefined;
    if (!note || !this.console || !actor) return route.handle(input);
    return this.console.audit.around(note, { actor, client: context.client.ip }, input, () => route.handle(input));
  }
}
