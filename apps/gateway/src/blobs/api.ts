// OpenAPI description of the local store's signed addresses (see @pds/http openapi.ts).
import { BLOB_ROUTE, SSE_HEADER, SSE_VALUE } from '@pds/storage';
import type { ApiOperation } from '@pds/http';

const signed =
  'The address comes from an upload or file call; its token authorises one method on one object until it expires (403 otherwise). Only with STORAGE=local: with S3 the addresses point at the store.';

export const blobsApi: ApiOperation[] = [
  {
    method: 'put',
    path: `${BLOB_ROUTE}/:token`,
    tag: 'files',
    auth: 'none',
    summary: "Step 2 of an upload: the file's bytes",
    description: signed,
    headers: [{ name: SSE_HEADER, description: `Must be ${SSE_VALUE}`, required: true }],
    rawBody: { contentType: 'application/octet-stream', description: 'The bytes (any content type; it is kept for downloads)' },
    responses: { 200: { description: 'Stored' }, 413: { description: 'Larger than MAX_UPLOAD_BYTES' } },
  },
  {
    method: 'get',
    path: `${BLOB_ROUTE}/:token`,
    tag: 'files',
    auth: 'none',
    summary: "A file's bytes",
    description: signed,
    responses: { 200: { description: 'The bytes, with the content type given at upload', contentType: 'application/octet-stream' } },
  },
];
