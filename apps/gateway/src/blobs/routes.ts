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

/** Why an upload cannot be taken whatever the state of its file, or undefined. */
function uploadRefusal(req: Request, maxBytes: number): Error | undefined {
  if (req.get(SSE_HEADER) !== SSE_VALUE) return ApiError.badRequest(`The upload must carry the header ${SSE_HEADER}: ${SSE_VALUE}`);
  if (Number(req.get('content-length') ?? 0) > maxBytes) return tooLarge(maxBytes);
  // A body parser that ran first has drained the stream: storing what is left would lose the data.
  if (req.body !== undefined) return new Error('the upload body was consumed by a body parser before the blob route');
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
    // A deleted (or swept) file takes no more bytes: they would be orphans no row points to. Its row is
    // read while the bytes arrive (a round trip less to wait for); a refusal waits for it, so a dead
    // address answers 403 whatever else is wrong, as when the row was read first.
    const live = fileLive(req, key);
    // Awaited wherever its answer matters; a failed read must never count as unhandled (e.g. the temp file could not be opened).
    void live.catch(() => undefined);
    const refusal = uploadRefusal(req, store.maxBytes);
    if (refusal) {
      if (!(await live)) throw ApiError.forbidden(REFUSED);
      throw refusal;
    }
    let deletedMeanwhile = false;
    try {
      // Not destroying the request on a refusal lets the 413 reach the client.
      const body = whileLive(req.iterator({ destroyOnReturn: false }), live);
      // Read again once the object has its name, while that name is made durable: a delete that came
      // while the bytes arrived removed the bytes before these landed.
      await store.write(key, body, {
        contentType: req.get('content-type'),
        maxBytes: store.maxBytes,
        whenNamed: async () => {
          deletedMeanwhile = !(await fileLive(req, key));
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
