// tus 1.0 at the instance's address (/api/v2.6/files/tus): the resumable way to do step 2 of an upload,
// for tus-js-client, Uppy and any other tus client as they are. Creation is authorised by the file's upload
// grant (its signed upload address in Upload-Metadata, or a token that sees the file); everything after
// by the upload's own address, whose token is the capability, as the signed address is for a single PUT.
import { z } from 'zod';
import type { Reply } from '@pds/http';
import { route, type GatewayRoute } from '../../route';
import { FILES_PATH } from '../routes';
import { CHECKSUM_ALGORITHMS, EXTENSIONS, httpDate, NO_STORE, PATCH_TYPE, RESUMABLE, TUS_VERSION } from './protocol';
import type { ResumableUploads, UploadProgress } from './service';

export const TUS_PATH = `${FILES_PATH}/tus`;
const tag = 'files';
const params = z.object({ token: z.string() });
const VERSION = { name: 'Tus-Resumable', description: `${TUS_VERSION} (412 otherwise)`, required: true };
const ADDRESSED =
  'The address is the one creation answered in Location: its token alone authorises it, until the upload expires (UPLOAD_DEADLINE after its last request), is terminated, or its file is deleted or completed (410), or its instance suspended (423) or closed (410). A token sent is not needed, and not read.';
const progressHeaders = {
  'Upload-Offset': 'Bytes stored so far',
  'Upload-Expires': 'When it expires unless resumed',
  'Tus-Resumable': TUS_VERSION,
};

const progress = (status: number, upload: UploadProgress, extra: Record<string, string> = {}): Reply => ({
  status,
  headers: { ...RESUMABLE, 'Upload-Offset': String(upload.offset), 'Upload-Expires': httpDate(upload.expires), ...extra },
});

export function tusRoutes(uploads: ResumableUploads, maxUploadBytes: number): GatewayRoute[] {
  return [
    // Express's preflight answer comes first (fast: false): a browser's OPTIONS from another origin is CORS's.
    route({
      method: 'options',
      path: TUS_PATH,
      access: 'instance',
      fast: false,
      tag,
      summary: 'Resumable uploads (tus): what this server serves',
      responses: {
        204: {
          description: 'The version, extensions, largest upload and checksum algorithms',
          headers: {
            'Tus-Version': TUS_VERSION,
            'Tus-Extension': EXTENSIONS,
            'Tus-Max-Size': 'MAX_UPLOAD_BYTES',
            'Tus-Checksum-Algorithm': CHECKSUM_ALGORITHMS,
          },
        },
      },
      handle: async () => ({
        status: 204,
        headers: {
          ...RESUMABLE,
          'Tus-Version': TUS_VERSION,
          'Tus-Extension': EXTENSIONS,
          'Tus-Max-Size': String(maxUploadBytes),
          'Tus-Checksum-Algorithm': CHECKSUM_ALGORITHMS,
        },
      }),
    }),
    route({
      method: 'post',
      path: TUS_PATH,
      access: 'anyone',
      tag,
      summary: 'Resumable uploads (tus): create an upload of a New file',
      description:
        'Step 2 of an upload in as many requests as it takes. Upload-Metadata (`key base64(value)` pairs) names the file: `contentUrl`, its signed upload address from step 1 (no token needed), or `fileId` with X-Auth-Token of an account that sees the file; `filetype` is kept as its content type. Upload-Length is checked against MAX_UPLOAD_BYTES (413) and against the quota beside the stored bytes and the other uploads under way (413); it is checked again at step 3. Only a New file takes one (409).',
      headers: [
        VERSION,
        { name: 'Upload-Length', description: 'The whole size in bytes', required: true },
        {
          name: 'Upload-Metadata',
          description: '`contentUrl <base64>` or `fileId <base64>`, optionally `filetype <base64>`',
          required: true,
        },
      ],
      responses: {
        201: {
          description: 'Created',
          headers: { Location: 'The upload’s address', 'Upload-Expires': 'When it expires unless resumed', 'Tus-Resumable': TUS_VERSION },
        },
      },
      handle: async ({ tenant, caller, req }) => {
        const created = await uploads.create(tenant, caller, req);
        return { status: 201, headers: { ...RESUMABLE, Location: created.location, 'Upload-Expires': httpDate(created.expires) } };
      },
    }),
    route({
      method: 'head',
      path: `${TUS_PATH}/:token`,
      access: 'instance',
      tag,
      summary: 'Resumable uploads (tus): how far an upload got',
      description: ADDRESSED,
      params,
      headers: [VERSION],
      responses: { 200: { description: 'Its offset and length', headers: { ...progressHeaders, 'Upload-Length': 'The declared size' } } },
      handle: async ({ tenant, params: { token }, req }) => {
        const upload = await uploads.status(tenant, token, req);
        return progress(200, upload, { 'Upload-Length': String(upload.length), ...NO_STORE });
      },
    }),
    route({
      method: 'patch',
      path: `${TUS_PATH}/:token`,
      access: 'instance',
      tag,
      summary: 'Resumable uploads (tus): the next bytes',
      description: `${ADDRESSED} Upload-Offset must be the offset stored (409 otherwise: ask HEAD). Bytes past the declared length are refused (413). With Upload-Checksum (\`sha256 <base64>\`) the request's bytes are kept only if they match (460 otherwise); without it every byte that arrives is kept, even when the connection is cut. One request at a time (423 while another writes). The last byte makes the file's bytes whole: then step 3, \`PUT …/complete\`.`,
      params,
      headers: [
        VERSION,
        { name: 'Upload-Offset', description: 'Where these bytes start', required: true },
        { name: 'Upload-Checksum', description: '`sha256 <base64 digest>` of this request’s bytes' },
      ],
      rawBody: { contentType: PATCH_TYPE, description: 'The bytes from Upload-Offset on' },
      responses: {
        204: { description: 'Stored', headers: progressHeaders },
        460: { description: 'Checksum mismatch: nothing of this request was stored' },
      },
      handle: async ({ tenant, params: { token }, req }) => progress(204, await uploads.append(tenant, token, req)),
    }),
    route({
      method: 'delete',
      path: `${TUS_PATH}/:token`,
      access: 'instance',
      tag,
      summary: 'Resumable uploads (tus): terminate an upload',
      description: `${ADDRESSED} What was stored of it is dropped; the file stays New (delete it to remove it).`,
      params,
      headers: [VERSION],
      responses: { 204: { description: 'Terminated', headers: { 'Tus-Resumable': TUS_VERSION } } },
      handle: async ({ tenant, params: { token }, req }) => {
        await uploads.terminate(tenant, token, req);
        return { status: 204, headers: RESUMABLE };
      },
    }),
  ];
}
