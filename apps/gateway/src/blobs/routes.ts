// The local store's signed addresses (`/blobs/<token>`): the byte path that S3 would serve otherwise.
// The token alone authorises the call (no login token: the address is what the client was handed),
// but only on the instance that owns the key, only for its method, and only until it expires.
import { Router, type Request } from 'express';
import { pipeline } from 'node:stream/promises';
import { ApiError } from '@pds/http';
import { BLOB_ROUTE, BlobTooLargeError, SSE_HEADER, SSE_VALUE, type LocalBlobStore } from '@pds/storage';
import type { FileRepository } from '@pds/db';
import { tenantOf } from '../context';

const REFUSED = 'The signed address is invalid or has expired';

function tooLarge(maxBytes: number): ApiError {
  // Closing stops a client that keeps sending a body the gateway will not read.
  return new ApiError(413, 'Payload Too Large', `The upload is larger than the limit of ${maxBytes} bytes`, {
    headers: { Connection: 'close' },
  });
}

/** The object key the request's token grants, on this instance; 403 otherwise (same answer for every reason). */
function grantedKey(store: LocalBlobStore, req: Request, method: 'PUT' | 'GET'): string {
  const key = store.openAddress(String(req.params.token), method);
  const address = tenantOf(req).instance.address;
  if (key === null || !key.startsWith(`${address}/`)) throw ApiError.forbidden(REFUSED);
  return key;
}

export function blobRoutes(store: LocalBlobStore, files: FileRepository): Router {
  const router = Router();

  /** Whether the file an upload key names still exists and is not deleted (its address may outlive it). */
  const fileLive = async (req: Request, key: string) => {
    const tenant = tenantOf(req);
    const file = await files.find(tenant.instance.id, key.slice(tenant.instance.address.length + 1));
    return file !== null && file.status !== 'Deleted';
  };

  router.put(`${BLOB_ROUTE}/:token`, async (req, res) => {
    const key = grantedKey(store, req, 'PUT');
    // A deleted (or swept) file takes no more bytes: they would be orphans no row points to.
    if (!(await fileLive(req, key))) throw ApiError.forbidden(REFUSED);
    if (req.get(SSE_HEADER) !== SSE_VALUE) throw ApiError.badRequest(`The upload must carry the header ${SSE_HEADER}: ${SSE_VALUE}`);
    if (Number(req.get('content-length') ?? 0) > store.maxBytes) throw tooLarge(store.maxBytes);
    // A body parser that ran first has drained the stream: storing what is left would lose the data.
    if (req.body !== undefined) throw new Error('the upload body was consumed by a body parser before the blob route');
    try {
      // Not destroying the request on a refusal lets the 413 reach the client.
      await store.write(key, req.iterator({ destroyOnReturn: false }), req.get('content-type'));
    } catch (error) {
      if (error instanceof BlobTooLargeError) throw tooLarge(store.maxBytes);
      throw error;
    }
    // Deleted while the bytes arrived: the delete removed the bytes before these landed.
    if (!(await fileLive(req, key))) {
      await store.remove(key);
      throw ApiError.forbidden(REFUSED);
    }
    res.status(200).end();
  });

  // Express answers HEAD with this route too; the body is then dropped.
  router.get(`${BLOB_ROUTE}/:token`, async (req, res) => {
    const blob = await store.read(grantedKey(store, req, 'GET'));
    if (!blob) throw ApiError.notFound('There is no content at this address');
    res.setHeader('Content-Type', blob.contentType);
    // Served from the instance's own origin: an uploaded page must not run scripts there.
    res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
    res.setHeader('Content-Length', String(blob.size));
    if (req.method === 'HEAD') {
      blob.stream.destroy();
      res.end();
      return;
    }
    await pipeline(blob.stream, res);
  });

  return router;
}
