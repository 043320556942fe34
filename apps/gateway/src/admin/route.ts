// The admin API's words for who may call a route, and `adminRoute()`, which declares one. The admin
// listener (ADMIN_PORT) serves its own small table with the same machinery as the public one
// (@pds/http routing), never the public routes, and the public listener never serves these.
import type { z } from 'zod';
import type { AuditNote, Client, DescribeAccess, RouteDef, RouteInput } from '@pds/http';

/**
 * - `public`: anyone who reaches the admin listener (its OpenAPI document, the console's page, log-in);
 * - `admin`: an operator: `Authorization: Bearer <ADMIN_TOKEN>`, or the console's session cookie;
 * - `root`: ADMIN_TOKEN itself (as a bearer, or a console log-in made with it): managing operator accounts.
 */
export type AdminAccess = 'public' | 'admin' | 'root';

/** Who acted, for the audit: `admin-token`, `operator:<name>`; absent on public routes. */
export interface AdminContext {
  client: Client;
  actor?: string;
}

/** A route's declaration, and what the audit records when it is called (the routes that change something). */
export type AdminRouteDef<A extends AdminAccess, P, Q, B> = RouteDef<
  A,
  A extends 'public' ? AdminContext : Required<AdminContext>,
  P extends z.ZodType | undefined ? P : undefined,
  Q extends z.ZodType | undefined ? Q : undefined,
  B extends z.ZodType | undefined ? B : undefined
> & {
  audit?: AuditNote<RouteInput<AdminContext, Out<P>, Out<Q>, Out<B>>>;
};

type Out<S> = S extends z.ZodType ? z.output<S> : unknown;

export type AdminRoute = AdminRouteDef<AdminAccess, any, any, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export function adminRoute<
  A extends AdminAccess,
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(declaration: AdminRouteDef<A, P, Q, B>): AdminRoute {
  return declaration as AdminRoute;
}

const NOTES: Record<AdminAccess, ReturnType<DescribeAccess>> = {
  public: { auth: 'none' },
  admin: { auth: 'adminToken', note: 'An operator: ADMIN_TOKEN, or the console’s session cookie (pds_operator).' },
  root: { auth: 'adminToken', note: 'ADMIN_TOKEN only (or a console log-in made with it).' },
};

export const describeAdminAccess: DescribeAccess = (access) => NOTES[access as AdminAccess];
