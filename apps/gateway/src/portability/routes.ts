// /api/v2.6/export and /api/v2.6/import: the owner takes the whole instance out as one archive
// (docs/export-format.md), or puts one into an empty instance by the three steps of a file upload.
import { z } from 'zod';
import { json } from '@pds/http';
import { route, type GatewayRoute } from '../route';
import type { PortabilityService } from './service';

export const EXPORT_PATH = '/api/v2.6/export';
export const IMPORT_PATH = '/api/v2.6/import';
const tag = 'portability';

const counters = {
  bytes: z.number().describe('Export: bytes of the archive so far. Import: bytes of the uploaded archive'),
  files: z.int().describe('Files written (export) or restored (import) so far'),
  records: z.int().describe('Records written or restored so far'),
  progress: z.number().min(0).max(1),
  createdAt: z.iso.datetime(),
};
const exportBody = z.object({
  exportId: z.uuid(),
  status: z.enum(['running', 'ready', 'failed']),
  ...counters,
  downloadUrl: z
    .url()
    .optional()
    .describe('When ready: a signed address of the archive, valid for SIGNED_URL_TTL; ask again for a new one'),
  expiresAt: z.iso.datetime().optional().describe('When ready: when the archive is removed (EXPORT_TTL_HOURS)'),
  error: z.string().optional().describe('When failed: why'),
});
const importBody = z.object({
  importId: z.uuid(),
  status: z.enum(['uploading', 'running', 'done', 'failed']),
  ...counters,
  uploadUrl: z
    .url()
    .optional()
    .describe('Step 1 only: the signed address to PUT the archive to (with x-amz-server-side-encryption: AES256)'),
  counts: z
    .record(z.string(), z.number())
    .optional()
    .describe('When done: how many users, apps, bundles, debits, files, fileBytes and records were restored'),
  report: z
    .object({ problem: z.string(), path: z.string().optional(), message: z.string() })
    .optional()
    .describe('When failed: why the archive was refused (nothing was changed)'),
});
const exportParams = z.object({ exportId: z.string() });
const importParams = z.object({ importId: z.string() });

export function portabilityRoutes(portability: PortabilityService): GatewayRoute[] {
  return [
    route({
      method: 'post',
      path: EXPORT_PATH,
      access: 'owner',
      // This and the two reads below: the owner may still take their data out while the instance is
      // closing (instances/closing.ts).
      whileClosing: true,
      tag,
      summary: 'Start an export of the whole instance (one running at a time)',
      responses: { 202: { description: 'The export, running', body: exportBody }, 409: { description: 'An export is running already' } },
      handle: async ({ tenant }) => json(await portability.startExport(tenant), 202),
    }),
    route({
      method: 'get',
      path: EXPORT_PATH,
      access: 'owner',
      whileClosing: true,
      tag,
      summary: 'The exports of this instance, newest first',
      responses: { 200: { description: 'The exports', body: z.array(exportBody) } },
      handle: async ({ tenant }) => json(await portability.listExports(tenant)),
    }),
    route({
      method: 'get',
      path: `${EXPORT_PATH}/:exportId`,
      access: 'owner',
      whileClosing: true,
      tag,
      summary: 'An export: progress, and the download address once ready',
      params: exportParams,
      responses: { 200: { description: 'The export', body: exportBody } },
      handle: async ({ tenant, params }) => json(await portability.getExport(tenant, params.exportId)),
    }),
    route({
      method: 'post',
      path: IMPORT_PATH,
      access: 'owner',
      tag,
      summary: 'Step 1 of an import: answers a signed address for the archive',
      description: 'Only into an empty instance (no file, no record): 409 otherwise.',
      responses: {
        201: { description: 'The import, waiting for its archive', body: importBody },
        409: { description: 'The instance is not empty' },
      },
      handle: async ({ tenant }) => json(await portability.createImport(tenant), 201),
    }),
    route({
      method: 'put',
      path: `${IMPORT_PATH}/:importId/complete`,
      access: 'owner',
      tag,
      summary: 'Step 3 of an import: the archive is uploaded; the restore starts',
      description:
        'The job checks the whole archive (every SHA-256) before it changes anything, then restores it in one transaction: all or nothing.',
      params: importParams,
      responses: {
        202: { description: 'The import, running (or as it is, when completed before)', body: importBody },
        409: { description: 'Not uploaded, the instance is not empty, or another import runs' },
        413: { description: 'Larger than IMPORT_MAX_BYTES' },
      },
      handle: async ({ tenant, params }) => json(await portability.completeImport(tenant, params.importId), 202),
    }),
    route({
      method: 'get',
      path: `${IMPORT_PATH}/:importId`,
      access: 'owner',
      tag,
      summary: 'An import: progress, and when finished the counts restored or the report of the refusal',
      params: importParams,
      responses: { 200: { description: 'The import', body: importBody } },
      handle: async ({ tenant, params }) => json(await portability.getImport(tenant, params.importId)),
    }),
  ];
}
