// /api/v2.6/applications/:appId/webhooks: an app's subscriptions, for the app itself or the owner.
import { z } from 'zod';
import { json } from '@pds/http';
import { route, type GatewayRoute } from '../route';
import type { WebhookService } from './webhooks';

const PATH = '/api/v2.6/applications/:appId/webhooks';
const tag = 'events';
const DESCRIPTION = "The application's own token or the owner's.";

const appParams = z.object({ appId: z.string().max(200) });
const webhookParams = appParams.extend({ webhookId: z.string().max(64) });

const webhookInput = z.object({
  url: z.string().max(2000).describe("Where events are POSTed; must be on the application's certified origin"),
  events: z.array(z.string().max(64)).max(50).optional().describe('Event types wanted (absent or empty: all the app may see)'),
  namespaces: z.array(z.string().max(64)).max(50).optional().describe('Data namespaces wanted (absent or empty: all the app may read)'),
});

const webhookBody = z.object({
  id: z.uuid(),
  url: z.url(),
  events: z.array(z.string()),
  namespaces: z.array(z.string()),
  delivered: z.int().describe('The sequence number of the last event delivered (or passed over)'),
  state: z.enum(['ok', 'retrying', 'failed']).describe('failed: retries gave up 24 h after the first failure'),
  lastError: z.string().nullable(),
  failingSince: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
});

export function webhookRoutes(webhooks: WebhookService): GatewayRoute[] {
  return [
    route({
      method: 'post',
      path: PATH,
      access: 'token',
      tag,
      summary: 'Subscribe an application to events (a webhook)',
      description: DESCRIPTION,
      params: appParams,
      body: webhookInput,
      responses: { 201: { description: 'The subscription', body: webhookBody } },
      handle: async ({ tenant, caller, params, body }) => json(await webhooks.create(tenant, caller, { ...params, body }), 201),
    }),
    route({
      method: 'get',
      path: PATH,
      access: 'token',
      tag,
      summary: "An application's webhooks and their delivery state",
      description: DESCRIPTION,
      params: appParams,
      responses: { 200: { description: 'The subscriptions', body: z.array(webhookBody) } },
      handle: async ({ tenant, caller, params }) => json(await webhooks.list(tenant, caller, params)),
    }),
    route({
      method: 'delete',
      path: `${PATH}/:webhookId`,
      access: 'token',
      tag,
      summary: 'Remove a webhook',
      description: DESCRIPTION,
      params: webhookParams,
      responses: { 200: { description: 'Removed', body: z.object({ message: z.string() }) } },
      async handle({ tenant, caller, params }) {
        await webhooks.remove(tenant, caller, params);
        return json({ message: 'Webhook removed' });
      },
    }),
  ];
}
