// The admin API (ADMIN_PORT only): the operator lists and searches instances, reads one, sets its
// quotas, suspends, resumes and closes it, and recounts the usage; sees the cluster's processes, queues,
// storage and dex registrations, and retries a failed job; reads and exports the audit. The console
// (its page, log-in and log-out) lives here too. Every route but the document, the page and the log-in
// needs an operator (ADMIN_TOKEN or the console's session); operator accounts need ADMIN_TOKEN itself.
import { z } from 'zod';
import type { AuditEntry } from '@pds/db';
import { CONSOLE_NOT_BUILT, json, openApiRoute, type Reply } from '@pds/http';
import type { ClusterService } from './cluster';
import type { OperatorService } from './operators';
import { TOKEN_ACTOR } from './pipeline';
import { adminRoute, type AdminRoute } from './route';
import type { AdminService } from './service';
import { instanceBody, instanceDetailsBody, instanceDetailsView, instanceView } from './view';

const tag = 'admin';
const amount = z.number().int().nonnegative();
const MAX_TAKE = 500;
const params = z.object({ address: z.string().trim().toLowerCase().min(1).max(253) });
const reason = z.object({ reason: z.string().trim().min(1, 'is required: say why').max(1000) });
const quotaValue = z.number().int().positive().max(Number.MAX_SAFE_INTEGER).nullable();
const quotaBody = z
  .object({
    bytes: quotaValue.optional().describe('File bytes; null: the cluster default (QUOTA_BYTES)'),
    recordsBytes: quotaValue.optional().describe('Data record bytes; null: the cluster default (QUOTA_RECORDS_BYTES)'),
  })
  .refine((q) => q.bytes !== undefined || q.recordsBytes !== undefined, 'give bytes, recordsBytes or both');
const listQuery = z.object({
  q: z.string().trim().max(253).optional().describe("Part of the address or of the owner's e-mail"),
  state: z.enum(['active', 'suspended', 'closing']).optional(),
  sort: z
    .enum(['created', 'usage', 'activity', 'state'])
    .default('created')
    .describe('created, usage (bytes), activity (last active) or state'),
  order: z.enum(['asc', 'desc']).default('desc'),
  skip: z.coerce.number().int().min(0).default(0),
  take: z.coerce.number().int().min(1).max(MAX_TAKE).default(50),
});
const operatorName = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'must be 1 to 64 of a-z, 0-9, ".", "_" and "-", starting with a letter or digit');
const logIn = z.union([
  z.object({ name: operatorName, password: z.string().min(1).max(256) }),
  z.object({ adminToken: z.string().min(1).max(1024) }),
]);
const sessionBody = z.object({ actor: z.string().describe('operator:<name>, or admin-token'), expiresAt: z.iso.datetime() });
const queueParams = z.object({ queue: z.string().max(64) });
const jobParams = queueParams.extend({ id: z.string().min(1).max(256) });
const page = z.object({
  skip: z.coerce.number().int().min(0).default(0),
  take: z.coerce.number().int().min(1).max(MAX_TAKE).default(50),
});
const jobSummary = z.object({
  id: z.string(),
  queue: z.string(),
  state: z.string(),
  attemptsMade: z.int(),
  attempts: z.int(),
  failedReason: z.string().optional(),
  createdAt: z.iso.datetime(),
  finishedAt: z.iso.datetime().optional(),
});
const jobDetails = jobSummary.extend({ data: z.unknown(), stacktrace: z.array(z.string()) });
const auditQuery = z.object({
  before: z.coerce.number().int().positive().optional().describe('Entries older than this id: the next page'),
  actor: z.string().max(200).optional(),
  action: z.string().max(100).optional().describe('An action, or a prefix ending in "." (instance.)'),
  target: z.string().max(253).optional().describe('Part of the target (an address)'),
  take: z.coerce.number().int().min(1).max(MAX_TAKE).default(100),
});
const auditBody = z.object({
  id: z.int(),
  at: z.iso.datetime(),
  actor: z.string(),
  action: z.string(),
  target: z.string().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
  client: z.string(),
  status: z.int(),
});
const clusterBody = z.object({
  processes: z.array(
    z.object({
      kind: z.enum(['gateway', 'gateway-worker', 'dex', 'dex-worker']),
      id: z.string(),
      host: z.string(),
      pid: z.int(),
      startedAt: z.iso.datetime(),
      seenAt: z.iso.datetime(),
      queues: z.array(z.string()).optional(),
    }),
  ),
  queues: z.array(
    z.object({ name: z.string(), waiting: z.int(), active: z.int(), retrying: z.int(), scheduled: z.int(), failed: z.int() }),
  ),
  storage: z.object({
    store: z.string(),
    files: amount,
    fileBytes: amount,
    records: amount,
    recordBytes: amount,
    databaseBytes: amount,
  }),
  dex: z.object({
    counts: z.object({ pending: z.int(), registered: z.int(), failed: z.int() }),
    waiting: z.array(z.object({ address: z.string(), dexState: z.enum(['pending', 'failed']), createdAt: z.iso.datetime() })),
  }),
});

/** Who an instance's record of state changes names: `operator` for ADMIN_TOKEN (as before accounts), else `operator:<name>`. */
const stateActor = (actor: string) => (actor === TOKEN_ACTOR ? 'operator' : actor);

/** An audit entry as the API shows it (optional fields omitted). */
export function auditView(entry: AuditEntry): z.output<typeof auditBody> {
  return {
    id: entry.id,
    at: entry.at.toISOString(),
    actor: entry.actor,
    action: entry.action,
    ...(entry.target !== null ? { target: entry.target } : {}),
    ...(entry.details !== null ? { details: entry.details } : {}),
    client: entry.client,
    status: entry.status,
  };
}

export interface AdminServices {
  admin: AdminService;
  operators: OperatorService;
  cluster: ClusterService;
  audit: { list(query: z.output<typeof auditQuery>): Promise<AuditEntry[]> };
  /** The console's page (operator.html), or none when the console is not built. */
  page?: () => Promise<Reply>;
}
const usageBody = z.object({ files: amount, fileBytes: amount, records: amount, recordBytes: amount });
const verifyBody = z.object({
  checked: z.int().describe('Instances recounted'),
  drift: z
    .array(z.object({ address: z.string(), stored: usageBody, counted: usageBody }))
    .describe('Instances whose kept usage differs from the recount (empty: none)'),
});
const one = { 200: { description: 'The instance, with its state changes', body: instanceDetailsBody } };

export function adminRoutes(s: AdminServices, document: () => Record<string, unknown>): AdminRoute[] {
  const { admin } = s;
  const details = (instance: Parameters<typeof instanceDetailsView>[0]) => json(instanceDetailsView(instance, admin.defaults));
  const onInstance = (action: string) => ({
    action,
    target: ({ params }: { params: { address: string } }) => params.address,
    details: ({ body }: { body: unknown }) => body as Record<string, unknown>,
  });
  return [
    openApiRoute('public', document),
    adminRoute({
      method: 'get',
      path: '/',
      access: 'public',
      tag,
      hidden: true,
      summary: "The operator's console (a page for browsers)",
      responses: { 200: { description: 'The page', contentType: 'text/html' } },
      handle: async () => {
        if (!s.page) return json(CONSOLE_NOT_BUILT, 404);
        return s.page();
      },
    }),
    adminRoute({
      method: 'post',
      path: '/session',
      access: 'public',
      tag,
      summary: "Log in to the operator's console: an operator's name and password, or ADMIN_TOKEN",
      description:
        'Answers with the session in an HttpOnly, SameSite=Strict cookie (pds_operator), valid 12 hours. Rate-limited per client like instance log-ins. A wrong name and a wrong password answer alike.',
      body: logIn,
      responses: { 200: { description: 'Logged in; the cookie carries the session', body: sessionBody } },
      async handle({ body, client }) {
        const session = await s.operators.logIn(body, client);
        return json({ actor: session.actor, expiresAt: session.expiresAt.toISOString() }, 200, { 'Set-Cookie': session.setCookie });
      },
    }),
    adminRoute({
      method: 'get',
      path: '/session',
      access: 'public',
      tag,
      summary: 'Who is logged in to the console: the actor, or nothing without a session',
      responses: { 200: { description: 'The session’s actor, if any', body: z.object({ actor: z.string().optional() }) } },
      handle: async ({ req, client }) => json(await s.operators.whoIs(req, client)),
    }),
    adminRoute({
      method: 'delete',
      path: '/session',
      access: 'admin',
      tag,
      summary: 'Log out of the console: the session ends and its cookie is cleared',
      responses: { 200: { description: 'Logged out', body: z.object({ message: z.string() }) } },
      audit: { action: 'session.end' },
      handle: async ({ req, client }) => json({ message: 'Logged out' }, 200, { 'Set-Cookie': await s.operators.logOut(req, client) }),
    }),
    adminRoute({
      method: 'get',
      path: '/instances',
      access: 'admin',
      tag,
      summary: 'List and search the instances, newest first or sorted by usage, last activity or state',
      query: listQuery,
      responses: {
        200: {
          description: 'A page of instances and how many match in all',
          body: z.object({ total: z.int(), skip: z.int(), take: z.int(), instances: z.array(instanceBody) }),
        },
      },
      async handle({ query }) {
        const { total, instances } = await admin.list({
          query: query.q || undefined,
          state: query.state,
          sort: query.sort,
          order: query.order,
          skip: query.skip,
          take: query.take,
        });
        return json({ total, skip: query.skip, take: query.take, instances: instances.map((i) => instanceView(i, admin.defaults)) });
      },
    }),
    adminRoute({
      method: 'get',
      path: '/instances/:address',
      access: 'admin',
      tag,
      summary: 'One instance: state, usage, quotas, accounts, apps, latest changes, exports and its record of state changes',
      params,
      responses: one,
      handle: async ({ params }) => details(await admin.get(params.address)),
    }),
    adminRoute({
      method: 'put',
      path: '/instances/:address/quota',
      access: 'admin',
      tag,
      summary: "Set the instance's quotas (null: back to the cluster default)",
      params,
      body: quotaBody,
      responses: one,
      audit: onInstance('instance.quota'),
      handle: async ({ params, body }) => details(await admin.setQuota(params.address, body)),
    }),
    adminRoute({
      method: 'post',
      path: '/instances/:address/suspend',
      access: 'admin',
      tag,
      summary: 'Suspend an active instance: every call to it answers 423 until it is resumed (tokens and data are kept)',
      params,
      body: reason,
      responses: { ...one, 409: { description: 'The instance is not active' } },
      audit: onInstance('instance.suspend'),
      handle: async ({ params, body, actor }) => details(await admin.suspend(params.address, body.reason, stateActor(actor))),
    }),
    adminRoute({
      method: 'post',
      path: '/instances/:address/resume',
      access: 'admin',
      tag,
      summary: 'Resume a suspended instance',
      params,
      body: reason,
      responses: { ...one, 409: { description: 'The instance is not suspended' } },
      audit: onInstance('instance.resume'),
      handle: async ({ params, body, actor }) => details(await admin.resume(params.address, body.reason, stateActor(actor))),
    }),
    adminRoute({
      method: 'post',
      path: '/usage/verify',
      access: 'admin',
      tag,
      summary: "Recount every instance's usage and list where the kept figures differ",
      description:
        'The writing statements keep the usage exact, so drift means a bug or a change made outside the product. A write landing during the recount may show once: run it again. Reads every file and record row: run it off-peak.',
      responses: { 200: { description: 'How many were checked, and the drift', body: verifyBody } },
      audit: { action: 'usage.verify' },
      handle: async () => json(await admin.verifyUsage()),
    }),
    adminRoute({
      method: 'post',
      path: '/instances/:address/close',
      access: 'admin',
      tag,
      summary:
        'Close an instance, active or suspended: 410 to everyone but its owner, who may cancel until `closeAfter`; then it is erased',
      description: 'The same flow as the owner’s own closing, with the same grace period (INSTANCE_CLOSE_GRACE_DAYS).',
      params,
      body: reason,
      responses: { ...one, 409: { description: 'The instance is already closing' } },
      audit: onInstance('instance.close'),
      handle: async ({ params, body, actor }) => details(await admin.close(params.address, body.reason, stateActor(actor))),
    }),
    adminRoute({
      method: 'get',
      path: '/cluster',
      access: 'admin',
      tag,
      summary: "The cluster: running processes, the gateway worker's queues, what is stored, and instances' registration with dex",
      description:
        'Processes are those that announced themselves in Redis in the last 30 s. A queue counts jobs waiting, running, waiting to be retried after a failure, scheduled (a sweep’s next run) and failed (kept 7 days).',
      responses: { 200: { description: 'The overview', body: clusterBody } },
      async handle() {
        const overview = await s.cluster.overview();
        return json({
          ...overview,
          dex: { ...overview.dex, waiting: overview.dex.waiting.map((w) => ({ ...w, createdAt: w.createdAt.toISOString() })) },
        });
      },
    }),
    adminRoute({
      method: 'get',
      path: '/queues/:queue/failed',
      access: 'admin',
      tag,
      summary: 'The failed jobs of one queue, newest first',
      params: queueParams,
      query: page,
      responses: { 200: { description: 'A page of failed jobs', body: z.object({ total: z.int(), jobs: z.array(jobSummary) }) } },
      handle: async ({ params, query }) => json(await s.cluster.failed(params.queue, query.skip, query.take)),
    }),
    adminRoute({
      method: 'get',
      path: '/queues/:queue/jobs/:id',
      access: 'admin',
      tag,
      summary: 'One job: its state, attempts, why it failed (with the stack of each attempt) and what it carries',
      description: 'A mail job shows its addressee and subject only, never its text or links.',
      params: jobParams,
      responses: { 200: { description: 'The job', body: jobDetails } },
      handle: async ({ params }) => json(await s.cluster.job(params.queue, params.id)),
    }),
    adminRoute({
      method: 'post',
      path: '/queues/:queue/jobs/:id/retry',
      access: 'admin',
      tag,
      summary: 'Run a failed job again, its attempts counted afresh (or run now one waiting out its backoff)',
      params: jobParams,
      responses: { 200: { description: 'The job, queued again', body: jobDetails }, 409: { description: 'The job has not failed' } },
      audit: { action: 'job.retry', target: ({ params }) => `${params.queue}/${params.id}` },
      handle: async ({ params }) => json(await s.cluster.retry(params.queue, params.id)),
    }),
    adminRoute({
      method: 'get',
      path: '/audit',
      access: 'admin',
      tag,
      summary: "The audit: every operator's action (who, when, what, on what, from where, and the answer), newest first",
      query: auditQuery,
      responses: { 200: { description: 'A page of entries', body: z.object({ entries: z.array(auditBody) }) } },
      handle: async ({ query }) => json({ entries: (await s.audit.list(query)).map(auditView) }),
    }),
    adminRoute({
      method: 'get',
      path: '/audit/export',
      access: 'admin',
      tag,
      summary: 'The whole audit (or what the filters select) as JSON lines, newest first: one entry per line',
      query: auditQuery.omit({ take: true, before: true }),
      responses: { 200: { description: 'One JSON object per line', contentType: 'application/x-ndjson' } },
      async handle({ query, res }) {
        res.writeHead(200, {
          'Content-Type': 'application/x-ndjson; charset=utf-8',
          'Content-Disposition': 'attachment; filename="audit.jsonl"',
        });
        for (let before: number | undefined; ;) {
          const entries = await s.audit.list({ ...query, before, take: EXPORT_PAGE });
          if (entries.length > 0) res.write(entries.map((e) => `${JSON.stringify(auditView(e))}\n`).join(''));
          if (entries.length < EXPORT_PAGE) break;
          before = entries[entries.length - 1]!.id;
        }
        res.end();
        return undefined;
      },
    }),
    adminRoute({
      method: 'get',
      path: '/operators',
      access: 'root',
      tag,
      summary: 'The operator accounts',
      responses: {
        200: {
          description: 'Names and when each was made',
          body: z.object({ operators: z.array(z.object({ name: z.string(), createdAt: z.iso.datetime() })) }),
        },
      },
      handle: async () =>
        json({ operators: (await s.operators.list()).map((o) => ({ name: o.name, createdAt: o.createdAt.toISOString() })) }),
    }),
    adminRoute({
      method: 'post',
      path: '/operators',
      access: 'root',
      tag,
      summary: 'Add an operator account, who then logs in to the console with its name and password',
      body: z.object({ name: operatorName, password: z.string().max(256) }),
      responses: {
        201: { description: 'Added', body: z.object({ name: z.string(), createdAt: z.iso.datetime() }) },
        409: { description: 'The name is taken' },
      },
      audit: { action: 'operator.add', target: ({ body }) => body.name },
      async handle({ body }) {
        const added = await s.operators.add(body.name, body.password);
        return json({ name: added.name, createdAt: added.createdAt.toISOString() }, 201);
      },
    }),
    adminRoute({
      method: 'delete',
      path: '/operators/:name',
      access: 'root',
      tag,
      summary: 'Remove an operator account: its sessions end at once',
      params: z.object({ name: operatorName }),
      responses: { 200: { description: 'Removed', body: z.object({ message: z.string() }) } },
      audit: { action: 'operator.remove', target: ({ params }) => params.name },
      async handle({ params }) {
        await s.operators.remove(params.name);
        return json({ message: `Operator ${params.name} removed` });
      },
    }),
  ];
}

/** Entries read per page while an export streams. */
const EXPORT_PAGE = 1000;
