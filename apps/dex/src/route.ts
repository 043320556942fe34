// Dex's words for who may call a route, its request pipeline, and `route()`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { clientOf, type AnyRoute, type Client, type DescribeAccess, type Pipeline, type RouteDef, type TrustProxy } from '@pds/http';
import type { TokenClaims } from '@pds/tokens';
import type { InstanceTokenVerifier } from './auth';

/** `public`: anyone, no token; `admin`: an instance owner's token that dex verifies (the service checks it is an admin's). */
export type Access = 'public' | 'admin';

export type Context<A extends Access> = A extends 'admin' ? { client: Client; caller: TokenClaims } : { client: Client };

export type DexRoute = RouteDef<Access, any, any, any, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export function route<
  A extends Access,
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(declaration: RouteDef<A, Context<A>, P, Q, B>): DexRoute {
  return declaration as DexRoute;
}

export const describeAccess: DescribeAccess = (access) => (access === 'admin' ? { auth: 'dexServiceToken' } : { auth: 'none' });

export class DexPipeline implements Pipeline<Context<Access>> {
  constructor(
    private readonly verifier: InstanceTokenVerifier,
    private readonly trust: TrustProxy,
  ) {}

  async prepare(req: IncomingMessage, _res: ServerResponse, route: AnyRoute): Promise<Context<Access>> {
    const client = clientOf(req, this.trust);
    if (route.access !== 'admin') return { client };
    return { client, caller: await this.verifier.verify(req.headers['x-auth-token'] as string | undefined) };
  }
}
