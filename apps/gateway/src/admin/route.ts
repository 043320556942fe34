// The admin API's words for who may call a route, and `adminRoute()`, which declares one. The admin
// listener (ADMIN_PORT) serves its own small table with the same machinery as the public one
// (@pds/http routing), never the public routes, and the public listener never serves these.
import type { z } from 'zod';
import type { Client, DescribeAccess, RouteDef } from '@pds/http';

/**
 * - `public`: anyone who reaches the admin listener (its OpenAPI document);
 * - `admin`: the operator, with `Authorization: Bearer <ADMIN_TOKEN>`.
 */
export type AdminAccess = 'public' | 'admin';

export interface AdminContext {
  client: Client;
}

export type AdminRoute = RouteDef<AdminAccess, AdminContext, any, any, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export function adminRoute<
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(declaration: RouteDef<AdminAccess, AdminContext, P, Q, B>): AdminRoute {
  return declaration as AdminRoute;
}

const NOTES: Record<AdminAccess, ReturnType<DescribeAccess>> = {
  public: { auth: 'none' },
  admin: { auth: 'adminToken', note: 'The operator only (ADMIN_TOKEN).' },
};

export const describeAdminAccess: DescribeAccess = (access) => NOTES[access as AdminAccess];
