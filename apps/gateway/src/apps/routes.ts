// The owner's view of the apps on the instance (paths and GET forms as the original's clients call
// them), and dex's push of certified app records.
import { z } from 'zod';
import { json } from '@pds/http';
import { route, type GatewayRoute } from '../route';
import { appTokenIssued } from '../events/read-notes';
import { pushSchema, type DexPushService } from './dex-push';
import type { ApplicationService } from './service';

const BASE = '/api/v2.6/applications';
const tag = 'applications';

// The original system's HatApplication shape (hat-application.ts builds it from the dex record).
const applicationBody = z.looseObject({
  application: z.looseObject({ id: z.string() }),
  setup: z.boolean(),
  enabled: z.boolean(),
  active: z.boolean(),
  needsUpdating: z.boolean().optional(),
});
const one = { 200: { description: 'The application', body: applicationBody } };
const appParams = z.object({ appId: z.string() });
const redirectQuery = z.object({ redirect: z.string().min(1).max(4096) });

export function applicationRoutes(apps: ApplicationService, push: DexPushService): GatewayRoute[] {
  return [
    route({
      method: 'get',
      path: BASE,
      access: 'owner',
      tag,
      summary: 'List the applications dex pushed to the instance',
      responses: { 200: { description: 'Every application', body: z.array(applicationBody) } },
      handle: async ({ tenant, caller }) => json(await apps.list(tenant, caller)),
    }),
    // Before `/:appId`: the original's web app lists the apps here too (it adds `?applicationId=`, unread).
    route({
      method: 'get',
      path: `${BASE}/hmi`,
      access: 'owner',
      tag,
      summary: 'List the applications (as GET /applications, for the original’s consent screens)',
      responses: { 200: { description: 'Every application', body: z.array(applicationBody) } },
      handle: async ({ tenant, caller }) => json(await apps.list(tenant, caller)),
    }),
    route({
      method: 'get',
      path: `${BASE}/:appId/hmi`,
      access: 'instance',
      tag,
      summary: 'What an application asks to be allowed (its consent screen), without a token',
      description: 'The application as dex certified it, in the original’s Application shape; no setup state.',
      params: appParams,
      responses: { 200: { description: 'The application', body: z.looseObject({ id: z.string(), info: z.looseObject({}) }) } },
      handle: async ({ tenant, params }) => json(await apps.consent(tenant, params)),
    }),
    route({
      method: 'get',
      path: `${BASE}/:appId`,
      access: 'token',
      tag,
      summary: 'One application',
      description: 'The owner, or the application itself.',
      params: appParams,
      responses: one,
      handle: async ({ tenant, caller, params }) => json(await apps.get(tenant, caller, params)),
    }),
    // The original's clients call setup and disable with GET as well as POST.
    ...(['get', 'post'] as const).flatMap((method) => [
      route({
        method,
        path: `${BASE}/:appId/setup`,
        access: 'owner',
        tag,
        summary: 'Set the application up: its account and permission sets (again: adopts the newest record)',
        params: appParams,
        responses: one,
        handle: async ({ tenant, caller, params }) => json(await apps.setUp(tenant, caller, params)),
      }),
      route({
        method,
        path: `${BASE}/:appId/disable`,
        access: 'owner',
        tag,
        summary: 'Disable the application: its tokens are refused from the next request',
        params: appParams,
        responses: one,
        handle: async ({ tenant, caller, params }) => json(await apps.disable(tenant, caller, params)),
      }),
    ]),
    route({
      method: 'get',
      path: `${BASE}/:appId/access-token`,
      access: 'owner',
      tag,
      summary: "A token for the application's account",
      params: appParams,
      responses: {
        200: { description: 'The app token (in the body only)', body: z.object({ accessToken: z.string(), userId: z.uuid() }) },
      },
      read: appTokenIssued,
      handle: async ({ tenant, caller, params }) => json(await apps.accessToken(tenant, caller, params)),
    }),
    // The login page's last step: the app token and the address to send it to, refused for a redirect
    // outside the app's own origins (the page must not hand a token to whoever wrote the link).
    route({
      method: 'get',
      path: `${BASE}/:appId/hatlogin`,
      access: 'owner',
      tag,
      summary: "The login page's last step: the app token and where to send it",
      description: "The redirect must be on the app's own origin (400 otherwise); it carries the token as `token=`.",
      params: appParams,
      query: redirectQuery,
      responses: {
        200: {
          description: 'The app token and the redirect',
          body: z.object({ accessToken: z.string(), userId: z.uuid(), redirect: z.url() }),
        },
      },
      read: appTokenIssued,
      handle: async ({ tenant, caller, params, query }) => json(await apps.loginRedirect(tenant, caller, { ...params, ...query })),
    }),
    route({
      method: 'put',
      path: '/api/dex/applications/:appId',
      access: 'dex',
      tag,
      summary: 'Dex → instance: deliver a certified application record',
      description:
        'Called by the dex worker with a dex-signed service token for this instance; an older version than the stored one is ignored.',
      params: appParams,
      body: pushSchema,
      responses: {
        200: {
          description:
            'Stored, or ignored as older; `setUp`: whether the owner has the app set up (dex offers its administrators to push to those)',
          body: z.object({ message: z.string(), appId: z.string(), version: z.int(), setUp: z.boolean() }),
        },
      },
      handle: async ({ tenant, params, body }) => json(await push.receive(tenant, { appId: params.appId, push: body })),
    }),
  ];
}
