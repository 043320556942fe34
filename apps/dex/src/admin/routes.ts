// The administrators' console's API on dex (/api/admin/…): log-in and log-out, clusters, apps and their
// versions, instances with their keys' fingerprints, an update pushed to selected instances (with a
// preview and a dry run), each push's progress and retry, and the audit.
import { z } from 'zod';
import { appRecordSchema } from '@pds/app-record';
import type { AppPush, AuditEntry, AuditRepository } from '@pds/db';
import { json } from '@pds/http';
import { route, type DexRoute } from '../route';
import type { DexConsoleService } from './service';

const tag = 'console';
const appParams = z.object({ appId: z.string().min(1).max(256) });
const address = z.string().trim().toLowerCase().min(1).max(253);
const pushBody = z.object({
  cluster: z.string().min(1).max(253).describe('The certified cluster whose registered instances may receive it'),
  addresses: z.array(address).max(10_000).optional().describe('These instances only'),
  setUp: z.boolean().optional().describe('Only the instances whose owner has the app set up (as their last delivered push said)'),
  record: appRecordSchema.describe('The app record to certify as the next version (its id: the app’s)'),
  dryRun: z.boolean().optional().describe('Say who would receive it; store and queue nothing'),
});
const pushView = (push: AppPush) => ({
  id: push.id,
  address: push.address,
  version: push.version,
  state: push.state,
  attempts: push.attempts,
  retries: push.retries,
  ...(push.lastError ? { lastError: push.lastError } : {}),
  ...(push.deliveredAt ? { deliveredAt: push.deliveredAt.toISOString() } : {}),
  ...(push.setUp !== null ? { setUp: push.setUp } : {}),
});
const pushBodyOut = z.object({
  id: z.string(),
  address: z.string(),
  version: z.int(),
  state: z.enum(['queued', 'sending', 'retrying', 'delivered', 'failed']),
  attempts: z.int(),
  retries: z.int().describe('How many times an administrator asked for it again'),
  lastError: z.string().optional(),
  deliveredAt: z.iso.datetime().optional(),
  setUp: z.boolean().optional(),
});
const auditView = (entry: AuditEntry) => ({
  ...entry,
  at: entry.at.toISOString(),
  target: entry.target ?? undefined,
  details: entry.details ?? undefined,
});
const auditQuery = z.object({
  before: z.coerce.number().int().positive().optional(),
  actor: z.string().max(253).optional(),
  action: z.string().max(100).optional(),
  target: z.string().max(253).optional(),
  take: z.coerce.number().int().min(1).max(500).default(100),
});
const registrationState = z.enum(['pending', 'registered', 'key-mismatch', 'retired']);
const instanceQuery = z.object({
  find: z.string().trim().toLowerCase().max(253).optional().describe('Part of the address'),
  cluster: z.string().max(253).optional(),
  state: registrationState.optional(),
  after: address.optional().describe('The last address of the previous page (its `next`)'),
  take: z.coerce.number().int().min(1).max(500).default(100),
});
const ok = (description: string, body?: z.ZodType) => ({ 200: { description, ...(body ? { body } : {}) } });

export function consoleRoutes(s: DexConsoleService, audit: AuditRepository): DexRoute[] {
  return [
    route({
      method: 'post',
      path: '/api/admin/session',
      access: 'public',
      tag,
      summary:
        'Log in to the administrators’ console: an administrator’s instance address and console password, or an administrator’s owner token (as update-application takes it)',
      description:
        'Answers with the session in an HttpOnly, SameSite=Strict cookie (pds_dex_admin), valid 12 hours. Rate-limited per client like instance log-ins. An unknown address and a wrong password answer alike.',
      body: z.union([z.object({ address, password: z.string().min(1).max(256) }), z.object({ token: z.string().min(1).max(8192) })]),
      responses: ok('Logged in', z.object({ actor: z.string(), expiresAt: z.iso.datetime() })),
      async handle({ body, client }) {
        const session = await s.logIn(body, client);
        return json({ actor: session.actor, expiresAt: session.expiresAt.toISOString() }, 200, { 'Set-Cookie': session.setCookie });
      },
    }),
    route({
      method: 'get',
      path: '/api/admin/session',
      access: 'public',
      tag,
      summary: 'Who is logged in to the console (nothing without a session)',
      responses: ok('The actor, if any', z.object({ actor: z.string().optional() })),
      handle: async ({ req, client }) => json(await s.whoIs(req, client)),
    }),
    route({
      method: 'delete',
      path: '/api/admin/session',
      access: 'console',
      tag,
      summary: 'Log out of the console',
      responses: ok('Logged out', z.object({ message: z.string() })),
      audit: { action: 'session.end' },
      handle: async ({ req, client }) => json({ message: 'Logged out' }, 200, { 'Set-Cookie': await s.logOut(req, client) }),
    }),
    route({
      method: 'get',
      path: '/api/admin/clusters',
      access: 'console',
      tag,
      summary: 'The certified cluster domains, and how many of their instances are in each state',
      responses: ok(
        'Domains',
        z.object({
          clusters: z.array(z.string()),
          counts: z
            .array(z.object({ cluster: z.string(), state: registrationState, count: z.int() }))
            .describe('Instances by cluster and state; a state none is in is left out'),
        }),
      ),
      handle: async () => {
        const [clusters, counts] = await Promise.all([s.clusterList(), s.instanceCounts()]);
        return json({ clusters, counts });
      },
    }),
    route({
      method: 'get',
      path: '/api/admin/instances',
      access: 'console',
      tag,
      summary: 'Registered, pending, key-mismatch and retired instances, with their keys’ fingerprints, a page at a time in address order',
      query: instanceQuery,
      responses: ok(
        'Instances by address',
        z.object({
          instances: z.array(
            z.object({
              address: z.string(),
              cluster: z.string(),
              state: registrationState,
              fingerprint: z.string().optional(),
              registeredAt: z.iso.datetime(),
              retiredAt: z.iso.datetime().optional(),
            }),
          ),
          total: z.int().describe('How many instances match'),
          next: z.string().optional().describe('The `after` of the next page, when there is one'),
        }),
      ),
      handle: async ({ query }) => {
        const { total, instances } = await s.instancePage({ ...query, take: query.take + 1 });
        const page = instances.slice(0, query.take);
        return json({
          instances: page.map((i) => ({
            address: i.address,
            cluster: i.clusterDomain,
            state: i.state === 'key_mismatch' ? 'key-mismatch' : i.state,
            ...(i.fingerprint ? { fingerprint: i.fingerprint } : {}),
            registeredAt: i.registeredAt.toISOString(),
            ...(i.retiredAt ? { retiredAt: i.retiredAt.toISOString() } : {}),
          })),
          total,
          ...(instances.length > query.take ? { next: page.at(-1)?.address } : {}),
        });
      },
    }),
    route({
      method: 'get',
      path: '/api/admin/apps',
      access: 'console',
      tag,
      summary: 'The certified apps, each with its latest version',
      responses: ok(
        'Apps by id',
        z.object({
          apps: z.array(
            z.object({ appId: z.string(), version: z.int(), record: z.unknown(), createdBy: z.string(), createdAt: z.iso.datetime() }),
          ),
        }),
      ),
      handle: async () => json({ apps: (await s.appList()).map((v) => ({ ...v, createdAt: v.createdAt.toISOString() })) }),
    }),
    route({
      method: 'get',
      path: '/api/admin/apps/:appId',
      access: 'console',
      tag,
      summary: 'One app’s record with its history of versions, newest first',
      params: appParams,
      responses: ok(
        'Versions',
        z.object({
          versions: z.array(z.object({ version: z.int(), record: z.unknown(), createdBy: z.string(), createdAt: z.iso.datetime() })),
        }),
      ),
      handle: async ({ params }) =>
        json({
          versions: (await s.versions(params.appId)).map(({ appId: _id, ...v }) => ({ ...v, createdAt: v.createdAt.toISOString() })),
        }),
    }),
    route({
      method: 'post',
      path: '/api/admin/apps/:appId/push',
      access: 'console',
      tag,
      summary: 'Push an update of the app to selected instances: by address, by cluster, or to those that have it set up; or try it dry',
      description:
        'The rules and signature of update-application: the record is validated and stored as the next version, and dex’s worker delivers it to each instance with a dex-signed token. With dryRun, only the receivers are answered.',
      params: appParams,
      body: pushBody,
      responses: ok(
        'The receivers, and the version queued for them (none for a dry run)',
        z.object({ targets: z.array(z.string()), version: z.int().optional() }),
      ),
      audit: {
        action: 'app.push',
        target: ({ params }) => params.appId,
        details: ({ body }) => ({ cluster: body.cluster, addresses: body.addresses, setUp: body.setUp, dryRun: body.dryRun ?? false }),
      },
      handle: async ({ params, body, actor }) => json(await s.push(params.appId, body, actor)),
    }),
    route({
      method: 'get',
      path: '/api/admin/apps/:appId/versions/:version/pushes',
      access: 'console',
      tag,
      summary: 'Each instance’s push of one version: queued, sending, retrying (with the reason), delivered or failed',
      params: appParams.extend({ version: z.coerce.number().int().min(1) }),
      responses: ok('Pushes by address', z.object({ pushes: z.array(pushBodyOut) })),
      handle: async ({ params }) => json({ pushes: (await s.pushes(params.appId, params.version)).map(pushView) }),
    }),
    route({
      method: 'post',
      path: '/api/admin/pushes/:id/retry',
      access: 'console',
      tag,
      summary: 'Deliver a push that failed (or is waiting to retry) now',
      params: z.object({ id: z.uuid() }),
      responses: { ...ok('The push, queued again', pushBodyOut), 409: { description: 'It was delivered' } },
      audit: { action: 'push.retry', target: ({ params }) => params.id },
      handle: async ({ params }) => json(pushView(await s.retry(params.id))),
    }),
    route({
      method: 'get',
      path: '/api/admin/audit',
      access: 'console',
      tag,
      summary: 'Every administrator’s action (who, when, what, on what, from where, and the answer), newest first',
      query: auditQuery,
      responses: ok('Entries', z.object({ entries: z.array(z.record(z.string(), z.unknown())) })),
      handle: async ({ query }) => json({ entries: (await audit.list(query)).map(auditView) }),
    }),
    route({
      method: 'get',
      path: '/api/admin/audit/export',
      access: 'console',
      tag,
      summary: 'The whole audit as JSON lines, newest first',
      query: auditQuery.omit({ before: true, take: true }),
      responses: { 200: { description: 'One JSON object per line', contentType: 'application/x-ndjson' } },
      async handle({ query, res }) {
        res.writeHead(200, {
          'Content-Type': 'application/x-ndjson; charset=utf-8',
          'Content-Disposition': 'attachment; filename="dex-audit.jsonl"',
        });
        for (let before: number | undefined; ;) {
          const entries = await audit.list({ ...query, before, take: 1000 });
          if (entries.length > 0) res.write(entries.map((e) => `${JSON.stringify(auditView(e))}\n`).join(''));
          if (entries.length < 1000) break;
          before = entries[entries.length - 1]!.id;
        }
        res.end();
        return undefined;
      },
    }),
  ];
}
