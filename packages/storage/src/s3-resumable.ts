// Resumable writes on S3: one multipart upload per upload, its parts sent as they fill in the gateway's
// memory (never through its disk), a few at a time. S3 takes no part under 5 MiB but the last, so the
// bytes a request leaves short of a whole part are kept as a small object of their own (the tail, under
// `<address>/.uploads/<ref>/`), read back at the start of the next request. Parts are numbered from the
// committed state: a part a refused request sent is replaced by the next one, and only the parts the
// committed state lists go into the object.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import type { Client } from 'minio';
import { SSE_HEADER, SSE_VALUE, storedContentType } from './blob-store';
import { requireRef, type AppendOptions, type ResumableOptions, type ResumableState, type S3ResumableState } from './resumable';

const MiB = 1024 * 1024;
/** S3's most parts per upload: parts are sized so a whole upload needs at most half of them. */
const MAX_PARTS = 10_000;
const PART_BYTES = 8 * MiB;
/** Parts in flight at once while the next fills (each held in memory until stored). */
const PARTS_IN_FLIGHT = 2;

/** Part size for an object of `length` bytes: 8 MiB, or more (whole MiB) when that would take over half S3's parts. */
export function partBytesFor(length: number): number {
  return Math.max(PART_BYTES, Math.ceil(length / (MAX_PARTS / 2) / MiB) * MiB);
}

/** Where the tails of an upload live: beside the instance's objects, in a folder no file id can name. */
export function tailPrefix(key: string, ref: string): string {
  return `${key.slice(0, key.indexOf('/'))}/.uploads/${ref}/`;
}

type Part = S3ResumableState['parts'][number];

/** The presigned address of part `number` of a multipart upload of `key`. */
export type PartAddress = (key: string, uploadId: string, number: number) => string;

const agents: Record<string, http.Agent> = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };
/** A part that makes no progress for this long fails its request (the client may resume). */
const PART_TIMEOUT_MS = 60_000;

/**
 * Sends a part to its presigned address (signed with UNSIGNED-PAYLOAD): the store checks the part's
 * integrity itself (its ETag), where minio's uploadPart first hashes every part in the gateway to sign
 * it, which cost the gateway more CPU than receiving the bytes. Its ETag, unquoted as minio gives it.
 */
function putPart(address: string, body: Buffer): Promise<string> {
  const url = new URL(address);
  const send = url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = send(url, { method: 'PUT', agent: agents[url.protocol], headers: { 'Content-Length': body.length } }, (res) => {
      const answer: Buffer[] = [];
      res.on('data', (chunk: Buffer) => answer.push(chunk));
      res.once('error', reject);
      res.once('end', () => {
        const etag = res.headers.etag;
        if (res.statusCode === 200 && etag) resolve(etag.replace(/^"|"$/g, ''));
        else reject(new Error(`UploadPart answered ${res.statusCode ?? '?'}: ${Buffer.concat(answer).toString().slice(0, 300)}`));
      });
    });
    req.once('error', reject);
    req.setTimeout(PART_TIMEOUT_MS, () => req.destroy(new Error(`UploadPart made no progress in ${PART_TIMEOUT_MS} ms`)));
    req.end(body);
  });
}

export class S3Resumable {
  constructor(
    private readonly client: Client,
    private readonly bucket: string,
    /** The store's removePrefix (objects under a prefix, and uploads there). */
    private readonly removePrefix: (prefix: string) => Promise<number>,
    private readonly partAddress: PartAddress,
  ) {}

  async begin(key: string, ref: string, options: ResumableOptions): Promise<S3ResumableState> {
    requireRef(ref);
    const contentType = storedContentType(options.contentType);
    const uploadId = await this.client.initiateNewMultipartUpload(this.bucket, key, {
      [SSE_HEADER]: SSE_VALUE,
      'Content-Type': contentType,
    });
    return {
      store: 's3',
      length: options.length,
      offset: 0,
      contentType,
      uploadId,
      partBytes: partBytesFor(options.length),
      parts: [],
      tail: null,
    };
  }

  async append(
    key: string,
    ref: string,
    state: ResumableState,
    source: AsyncIterable<Buffer>,
    options: AppendOptions = {},
  ): Promise<S3ResumableState> {
    const from = s3(state);
    requireRef(ref);
    const parts: Part[] = [...from.parts];
    const stored = () => parts.reduce((sum, part) => sum + part.size, 0);
    /** The committed state: the one given, until `durable` accepts a later one. */
    let committed = from;
    let next = parts.length + 1;
    const inFlight: { body: Buffer; sending: Promise<Part> }[] = [];
    /**
     * Parts fill buffers of their own, each used again once its part is stored: an upload allocates at most
     * PARTS_IN_FLIGHT + 1 of them, not one per part (part-sized buffers live outside V8's heap, and each new
     * one pushes it towards a full collection).
     */
    const spare: Buffer[] = [];
    let filling: Buffer | undefined;
    let filled = 0;
    /**
     * Waits for the oldest part in flight and records it; with `durable`, commits the state it makes. Parts
     * land in the order they were sent, so the landed ones are always the first ones.
     */
    const land = async () => {
      const { body, sending } = inFlight.shift() as (typeof inFlight)[number];
      parts.push(await sending);
      if (body.length === from.partBytes) spare.push(body);
      // The landed parts hold the tail read back at the start (it went into the first of them).
      const state: S3ResumableState = { ...from, parts: [...parts], offset: stored(), tail: null };
      if (!options.durable || state.offset === from.length) return;
      await options.durable(state);
      await this.release(ref, committed, state);
      committed = state;
    };
    const send = async (body: Buffer, final: boolean) => {
      if (inFlight.length >= PARTS_IN_FLIGHT) await land();
      const number = next++;
      const sending = putPart(this.partAddress(key, from.uploadId, number), body).then((etag) => ({ number, size: body.length, etag }));
      // Awaited in order by land(); a failure must not count as unhandled before then.
      sending.catch(() => undefined);
      inFlight.push({ body, sending });
      if (final) while (inFlight.length > 0) await land();
    };
    /** Copies bytes into the part being filled, sending each part as it fills. */
    const fill = async (bytes: Buffer) => {
      for (let at = 0; at < bytes.length;) {
        filling ??= spare.pop() ?? Buffer.allocUnsafe(from.partBytes);
        const copied = bytes.copy(filling, filled, at);
        filled += copied;
        at += copied;
        if (filled === from.partBytes) {
          await send(filling, false);
          filling = undefined;
          filled = 0;
        }
      }
    };
    try {
      if (from.tail) await fill(await this.readTail(from.tail.key));
      for await (const chunk of source) await fill(chunk);
      const rest = filling ? filling.subarray(0, filled) : Buffer.alloc(0);
      // What is in flight is whole parts (the final one is sent after this is counted).
      const received = stored() + inFlight.length * from.partBytes + rest.length;
      if (received === from.length && rest.length > 0) await send(rest, true);
      while (inFlight.length > 0) await land();
      if (rest.length === 0 || received === from.length) return { ...from, parts, offset: stored(), tail: null };
      const tail = { key: `${tailPrefix(key, ref)}${randomBytes(8).toString('hex')}`, size: rest.length };
      await this.client.putObject(this.bucket, tail.key, rest, rest.length, { [SSE_HEADER]: SSE_VALUE });
      return { ...from, parts, offset: stored() + tail.size, tail };
    } finally {
      // A failure leaves parts in flight: they land (or fail) before the error is answered.
      await Promise.allSettled(inFlight.map((part) => part.sending));
    }
  }

  /** The tail `drop` holds that `keep` does not. */
  async release(_ref: string, drop: ResumableState, keep: ResumableState): Promise<void> {
    const dropped = s3(drop).tail;
    if (dropped && dropped.key !== s3(keep).tail?.key) await this.client.removeObject(this.bucket, dropped.key);
  }

  async finish(key: string, ref: string, state: ResumableState): Promise<void> {
    const done = s3(state);
    if (done.offset !== done.length) throw new Error(`the upload holds ${done.offset} of ${done.length} bytes`);
    if (done.parts.length === 0) {
      // Nothing to assemble (an empty file): S3 completes no upload without a part.
      await this.client.putObject(this.bucket, key, Buffer.alloc(0), 0, { [SSE_HEADER]: SSE_VALUE, 'Content-Type': done.contentType });
      await this.client.abortMultipartUpload(this.bucket, key, done.uploadId);
    } else {
      const etags = done.parts.map((part) => ({ part: part.number, etag: part.etag }));
      await this.client.completeMultipartUpload(this.bucket, key, done.uploadId, etags);
    }
    await this.removePrefix(tailPrefix(key, ref));
  }

  async abort(key: string, ref: string, state: ResumableState): Promise<void> {
    const { uploadId } = s3(state);
    await this.client.abortMultipartUpload(this.bucket, key, uploadId).catch((error: unknown) => {
      // Gone already: completed (the object is the file's now) or aborted. Swift's s3api says NoSuchKey.
      const code = (error as { code?: string }).code;
      if (code !== 'NoSuchUpload' && code !== 'NoSuchKey') throw error;
    });
    await this.removePrefix(tailPrefix(key, ref));
  }

  private async readTail(key: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of (await this.client.getObject(this.bucket, key)) as Readable) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }
}

function s3(state: ResumableState): S3ResumableState {
  if (state.store !== 's3') throw new Error('this upload was begun on another kind of store');
  return state;
}
