// /api/v2.6/events (the stream) and /api/v2.6/activity (the owner's log); webhooks are in webhook-routes.ts.
import { z } from 'zod';
import { json } from '@pds/http';
import { isOwner, type Caller } from '../context';
import { route, type GatewayRoute } from '../route';
import type { ActivityService } from './activity';
import type { EventStreams } from './stream';
import type { Viewer } from './visibility';

const tag = 'events';

const streamQuery = z.object({
  lastEventId: z.coerce.number().int().min(0).optional().describe('Resume after this event (the Last-Event-ID header wins)'),
});

const activityQuery = z.object({
  since: z.iso.datetime().optional().describe('From this time (inclusive)'),
  until: z.iso.datetime().optional().describe('Up to this time (exclusive)'),
  actor: z.uuid().optional().describe('Only what this account (an app, a user, the owner) did'),
  type: z
    .string()
    .regex(/^[a-z]+(\.[a-z_]*)?$/, 'must be an event or read type, or a prefix such as "record."')
    .optional()
    .describe('An exact type, or a prefix ending in "." (record. for every record change)'),
  take: z.coerce.number().int().min(1).max(1000).default(100),
});

const activityEntry = z.object({
  kind: z.enum(['change', 'read']),
  type: z.string(),
  actor: z.object({
    kind: z.string(),
    id: z.uuid().nullable(),
    name: z.string().nullable().describe("The account's username, or for an app's account the app's title; null when gone or none"),
  }),
  object: z.record(z.string(), z.unknown()),
  names: z
    .record(z.string(), z.string())
    .describe("The names of what the object's ids name, by id: a file's name (fileId), an app's title (appId), an account's (userId)"),
  address: z.string().nullable().describe('The client address of the request'),
  times: z.number().int().min(1).describe('How many identical reads within a second this entry stands for (1 for a change)'),
  time: z.iso.datetime().describe('When it happened (the first of the reads)'),
});

export function viewerOf(caller: Caller): Viewer {
  return isOwner(caller) ? { owner: true } : { owner: false, userId: caller.user.id };
}

/** The id a reconnecting EventSource sends; a value that is no event number is ignored (the stream starts now). */
function lastEventIdOf(header: string | string[] | undefined, query: number | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value !== undefined && /^\d{1,15}$/.test(value)) return Number(value);
  return query;
}

export function eventRoutes(streams: EventStreams, activity: ActivityService): GatewayRoute[] {
  return [
    route({
      method: 'get',
      path: '/api/v2.6/events',
      access: 'token',
      tag,
      summary: 'A live stream of the events the caller may see (Server-Sent Events)',
      description:
        'Each event has its sequence number as `id`; send `Last-Event-ID` (or `lastEventId`) to resume after it. ' +
        'A comment line every EVENTS_HEARTBEAT seconds keeps the stream open. The token may be in the X-Auth-Token query parameter (EventSource sets no headers).',
      query: streamQuery,
      responses: { 200: { description: 'The stream', contentType: 'text/event-stream' } },
      async handle({ tenant, caller, query, req, res }) {
        const from = await streams.start(tenant, lastEventIdOf(req.headers['last-event-id'], query.lastEventId));
        await streams.serve(tenant, viewerOf(caller), from, req, res);
        return undefined;
      },
    }),
    route({
      method: 'get',
      path: '/api/v2.6/activity',
      access: 'owner',
      tag,
      summary: 'The owner’s activity log: every change and the reads that matter, newest first',
      query: activityQuery,
      responses: { 200: { description: 'The entries', body: z.array(activityEntry) } },
      handle: async ({ tenant, query }) => json(await activity.list(tenant, query)),
    }),
  ];
}
