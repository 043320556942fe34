// The local store's signed addresses (`/blobs/<token>`): the byte path that S3 would serve otherwise.
// The token alone authorises the call (no login token: the address is what the client was handed),
// but only on the instance that owns the key, only for its method, and only until it expires.
import type { IncomingMessage } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { ApiError, arrivingBytes, UPLOAD_IDLE_MS } from '@pds/http';
import { BLOB_ROUTE, BlobTooLargeError, SSE_HEADER, SSE_VALUE, type LocalBlobStore, type OpenedAddress } from '@pds/storage';
import type { FileService } from '../files/service';
import type { ResolvedInstance } from '../instances/registry';
import { CLOSING_MESSAGE } from '../instances/state';
import { isExportKey } from '../portability/keys';
import { route, type GatewayRoute } from '../route';

const REFUSED = 'The signed address is invalid or has expired';
const SIGNED =
  'The address comes from an upload or file call; its token authorises one method on one object until it expires (403 otherwise). Only with STORAGE=local: with S3 the addresses point at the store.';
const tokenParams = z.object({ token: z.string() });

function tooLarge(maxBytes: number): ApiError {
  // Closing stops a client that keeps sending a body the gateway will not read.
  return new ApiError(413, 'Payload Too Large', `The upload is larger than the limit of ${maxBytes} bytes`, {
    headers: { Connection: 'close' },
  });
}

/** What the token grants, on this instance; 403 otherwise (same answer for every reason). */
function granted(store: LocalBlobStore, tenant: ResolvedInstance, token: string, method: 'PUT' | 'GET'): OpenedAddress {
  const address = store.openAddress(token, method);
  if (address === null || !address.key.startsWith(`${tenant.instance.address}/`)) throw ApiError.forbidden(REFUSED);
  return address;
}

/** Why an upload cannot be taken whatever the state of its file, or undefined. */
function uploadRefusal(req: IncomingMessage, maxBytes: number): Error | undefined {
  if (req.headers[SSE_HEADER] !== SSE_VALUE) return ApiError.badRequest(`The upload must carry the header ${SSE_HEADER}: ${SSE_VALUE}`);
  if (Number(req.headers['content-length'] ?? 0) > maxBytes) return tooLarge(maxBytes);
  return undefined;
}

/** The body's chunks while the file may still take them: ends in a 403 once its row says it is dead. */
async function* whileLive(body: AsyncIterable<Buffer>, live: Promise<boolean>): AsyncGenerator<Buffer> {
  let known = false;
  live.then(
    () => (known = true),
    () => (known = true),
  );
  for await (const chunk of body) {
    // Stop taking bytes for a dead file (or a failed read) as soon as the answer is in.
    if (known && !(await live)) break;
    yield chunk;
  }
  if (!(await live)) throw ApiError.forbidden(REFUSED);
}

/** Whether a signed upload address may still write its key (a file's bytes, or an import's archive). */
export type UploadTargets = Pick<FileService, 'acceptsUpload'>;

export function blobRoutes(store: LocalBlobStore, files: UploadTargets): GatewayRoute[] {
  return [
    route({
      method: 'put',
      path: `${BLOB_ROUTE}/:token`,
      access: 'instance',
      tag: 'files',
      summary: "Step 2 of an upload: the file's bytes",
      description: SIGNED,
      params: tokenParams,
      headers: [{ name: SSE_HEADER, description: `Must be ${SSE_VALUE}`, required: true }],
      rawBody: { contentType: 'application/octet-stream', description: 'The bytes (any content type; it is kept for downloads)' },
      responses: { 200: { description: 'Stored' }, 413: { description: 'Larger than MAX_UPLOAD_BYTES' } },
      async handle({ tenant, params, req }) {
        const { key } = granted(store, tenant, params.token, 'PUT');
        // A deleted (or swept) file takes no more bytes. Its row is read while the bytes arrive (a round
        // trip less to wait for); a refusal waits for it, so a dead address answers 403 whatever else is
        // wrong, as when the row was read first.
        const live = files.acceptsUpload(tenant, key);
        // Awaited wherever its answer matters; a failed read must never count as unhandled.
        void live.catch(() => undefined);
        const refusal = uploadRefusal(req, store.maxBytes);
        if (refusal) {
          if (!(await live)) throw ApiError.forbidden(REFUSED);
          throw refusal;
        }
        let deletedMeanwhile = false;
        try {
          // Not destroying the request on a refusal lets the 413 reach the client.
          const body = whileLive(arrivingBytes(req, UPLOAD_IDLE_MS), live);
          // Read again once the object has its name, while that name is made durable: a delete that came
          // while the bytes arrived removed the bytes before these landed.
          await store.write(key, body, {
            contentType: req.headers['content-type'],
            maxBytes: store.maxBytes,
            whenNamed: async () => {
              deletedMeanwhile = !(await files.acceptsUpload(tenant, key));
            },
          });
        } catch (error) {
          if (error instanceof BlobTooLargeError) throw tooLarge(store.maxBytes);
          throw error;
        }
        if (deletedMeanwhile) {
          await store.remove(key);
          throw ApiError.forbidden(REFUSED);
        }
        return { status: 200 };
      },
    }),
    // Express answers HEAD with this route too; the body is then dropped.
    route({
      method: 'get',
      path: `${BLOB_ROUTE}/:token`,
      access: 'instance',
      whileClosing: true,
      tag: 'files',
      summary: "A file's bytes",
      description: SIGNED,
      params: tokenParams,
      responses: { 200: { description: 'The bytes, with the content type given at upload', contentType: 'application/octet-stream' } },
      async handle({ tenant, params, req, res }) {
        const { key, response } = granted(store, tenant, params.token, 'GET');
        // A closing instance serves only its owner's export (its address comes from an owner-only call).
        if (tenant.instance.state === 'closing' && !isExportKey(tenant.instance.address, key)) throw ApiError.gone(CLOSING_MESSAGE);
        const blob = await store.read(key);
        if (!blob) throw ApiError.notFound('There is no content at this address');
        res.setHeader('Content-Type', response?.contentType ?? blob.contentType);
        if (response) res.setHeader('Content-Disposition', response.disposition);
        // Served from the instance's own origin: an uploaded page must not run scripts there.
        res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
        res.setHeader('Content-Length', String(blob.size));
        if (req.method === 'HEAD') {
          blob.stream.destroy();
          res.end();
          return undefined;
        }
        await pipeline(blob.stream, res);
        return undefined;
      },
    }),
  ];
}
