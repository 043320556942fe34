// The admin API (ADMIN_PORT only): the operator lists and searches instances, reads one, sets its
// quotas, suspends, resumes and closes it, and recounts the usage. Every route but the document needs ADMIN_TOKEN.
import { z } from 'zod';
import { json, openApiRoute } from '@pds/http';
import { adminRoute, type AdminRoute } from './route';
import type { AdminService } from './service';
import { instanceBody, instanceDetailsBody, instanceDetailsView, instanceView } from './view';

const tag = 'admin';
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
  skip: z.coerce.number().int().min(0).default(0),
  take: z.coerce.number().int().min(1).max(MAX_TAKE).default(50),
});
const amount = z.number().int().nonnegative();
const usageBody = z.object({ files: amount, fileBytes: amount, records: amount, recordBytes: amount });
const verifyBody = z.object({
  checked: z.int().describe('Instances recounted'),
  drift: z
    .array(z.object({ address: z.string(), stored: usageBody, counted: usageBody }))
    .describe('Instances whose kept usage differs from the recount (empty: none)'),
});
const one = { 200: { description: 'The instance, with its state changes', body: instanceDetailsBody } };

export function adminRoutes(admin: AdminService, document: () => Record<string, unknown>): AdminRoute[] {
  const details = (instance: Parameters<typeof instanceDetailsView>[0]) => json(instanceDetailsView(instance, admin.defaults));
  return [
    openApiRoute('public', document),
    adminRoute({
      method: 'get',
      path: '/instances',
      access: 'admin',
      tag,
      summary: 'List and search the instances, newest first',
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
      summary: 'One instance: state, usage, quotas and its record of state changes',
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
      handle: async ({ params, body }) => details(await admin.suspend(params.address, body.reason)),
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
      handle: async ({ params, body }) => details(await admin.resume(params.address, body.reason)),
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
      handle: async ({ params, body }) => details(await admin.close(params.address, body.reason)),
    }),
  ];
}
