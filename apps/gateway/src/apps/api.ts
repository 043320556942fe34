// OpenAPI description of the applications routes and the dex push receiver (see @pds/http openapi.ts).
import { z } from 'zod';
import type { ApiOperation } from '@pds/http';
import { pushSchema } from './dex-push';

const BASE = '/api/v2.6/applications';
// The original system's HatApplication shape (hat-application.ts builds it from the dex record).
const applicationBody = z.looseObject({
  application: z.looseObject({ id: z.string() }),
  setup: z.boolean(),
  enabled: z.boolean(),
  active: z.boolean(),
  needsUpdating: z.boolean().optional(),
});
const app = (method: ApiOperation['method'], path: string, summary: string, description = 'Owner only.'): ApiOperation => ({
  method,
  path: `${BASE}${path}`,
  tag: 'applications',
  auth: 'instanceToken',
  summary,
  description,
  responses: { 200: { description: 'The application', body: applicationBody } },
});

export const applicationsApi: ApiOperation[] = [
  {
    ...app('get', '', 'List the applications dex pushed to the instance'),
    responses: { 200: { description: 'Every application', body: z.array(applicationBody) } },
  },
  app('get', '/:appId', 'One application', 'The owner, or the application itself.'),
  // The original's clients call setup and disable with GET as well as POST.
  ...(['get', 'post'] as const).flatMap((method) => [
    app(method, '/:appId/setup', 'Set the application up: its account and permission sets (again: adopts the newest record)'),
    app(method, '/:appId/disable', 'Disable the application: its tokens are refused from the next request'),
  ]),
  {
    ...app('get', '/:appId/access-token', "A token for the application's account"),
    responses: { 200: { description: 'The app token (in the body only)', body: z.object({ accessToken: z.string(), userId: z.uuid() }) } },
  },
  {
    ...app('get', '/:appId/hatlogin', "The login page's last step: the app token and where to send it"),
    description: "Owner only. The redirect must be on the app's own origin (400 otherwise); it carries the token as `token=`.",
    query: z.object({ redirect: z.string().min(1).max(4096) }),
    responses: {
      200: {
        description: 'The app token and the redirect',
        body: z.object({ accessToken: z.string(), userId: z.uuid(), redirect: z.url() }),
      },
    },
  },
  {
    method: 'put',
    path: '/api/dex/applications/:appId',
    tag: 'applications',
    auth: 'dexServiceToken',
    summary: 'Dex → instance: deliver a certified application record',
    description:
      'Called by the dex worker with a dex-signed service token for this instance; an older version than the stored one is ignored.',
    body: pushSchema,
    responses: {
      200: { description: 'Stored, or ignored as older', body: z.object({ message: z.string(), appId: z.string(), version: z.int() }) },
    },
  },
];
