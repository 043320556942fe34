// Resumable writes on S3: one multipart upload per upload, each part streamed on to the store as its
// bytes arrive (never through the gateway's disk), the next begun while the store answers the last. S3
// takes no part under 5 MiB but the last, so the bytes a request leaves short of a whole part are kept
// as a small object of their own (the tail, under `<address>/.uploads/<ref>/`), read back at the start
// of the next request. Parts are numbered from the
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
/**
 * Each part is an object of its own to the store until the upload completes, at a cost per part: 8 MiB
 * parts made a 1 GiB upload 0.6 of a single PUT's speed on Swift, 32 MiB ones 0.8 (docs/performance.md).
 * A request holds at most one part's bytes (see PartUpload).
 */
const PART_BYTES = 32 * MiB;
/** Bytes of a part passed to the store in one write. */
const WRITE_BYTES = 512 * 1024;
/** Parts sent whole and waiting for the store's answer while the next is sent. */
const PARTS_IN_FLIGHT = 2;

/** Part size for an object of `length` bytes: 32 MiB, or more (whole MiB) when that would take over half S3's parts. */
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
 * A PUT of `size` bytes to a part's presigned address (signed with UNSIGNED-PAYLOAD): the store checks the
 * part's integrity itself (its ETag), where minio's uploadPart first hashes every part in the gateway to
 * sign it, which cost the gateway more CPU than receiving the bytes. `answer`: the ETag, unquoted as
 * minio gives it.
 */
function partRequest(address: string, size: number): { req: http.ClientRequest; answer: Promise<string> } {
  const url = new URL(address);
  const send = url.protocol === 'https:' ? https.request : http.request;
  let req!: http.ClientRequest;
  const answer = new Promise<string>((resolve, reject) => {
    req = send(url, { method: 'PUT', agent: agents[url.protocol], headers: { 'Content-Length': size } }, (res) => {
      const said: Buffer[] = [];
      res.on('data', (chunk: Buffer) => said.push(chunk));
      res.once('error', reject);
      res.once('end', () => {
        const etag = res.headers.etag;
        if (res.statusCode === 200 && etag) resolve(etag.replace(/^"|"$/g, ''));
        else reject(new Error(`UploadPart answered ${res.statusCode ?? '?'}: ${Buffer.concat(said).toString().slice(0, 300)}`));
      });
    });
    req.once('error', reject);
    req.setTimeout(PART_TIMEOUT_MS, () => req.destroy(new Error(`UploadPart made no progress in ${PART_TIMEOUT_MS} ms`)));
  });
  answer.catch(() => undefined);
  return { req, answer };
}

/** Until the request can take more bytes, or has ended (failed or destroyed). */
function drained(req: http.ClientRequest): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      req.off('drain', done);
      req.off('close', done);
      resolve();
    };
    req.once('drain', done);
    req.once('close', done);
  });
}

/**
 * One part, sent on to the store as its bytes arrive: its PUT declares the part's size and passes each
 * piece through, so a large part costs no buffer filled first and no wait for one (fewer, larger parts
 * are what make a multipart upload about as fast as a single PUT). Its bytes are held until the part is
 * whole all the same: a request cut mid-part keeps them as the tail, and a part whose stream the store
 * dropped (its own idle timeout outlasted by a client's pause) is sent again from them, whole.
 */
class PartUpload {
  received = 0;
  private readonly put: { req: http.ClientRequest; answer: Promise<string> };
  private failed = false;

  constructor(
    private readonly address: string,
    readonly number: number,
    readonly size: number,
    /**
     * Where the part's bytes are held (a copy: the pieces themselves, held for the length of a part, would
     * outlive V8's young generation and cost full collections), given back through `done` once not needed.
     */
    private readonly held: Buffer,
    private readonly done: (held: Buffer) => void,
  ) {
    this.put = partRequest(address, size);
    this.put.req.once('error', () => (this.failed = true));
  }

  async write(bytes: Buffer): Promise<void> {
    this.received += bytes.copy(this.held, this.received);
    const { req } = this.put;
    if (this.failed || req.destroyed) return;
    // The pieces (a socket read each, often 64 KiB) go out together, a few hundred KiB a write.
    if (req.writableCorked === 0) req.cork();
    req.write(bytes);
    if (req.writableLength < WRITE_BYTES) return;
    req.uncork();
    if (req.writableNeedDrain && !req.destroyed) await drained(req);
  }

  /** The part, once the store has it: streamed, or sent again whole when its stream failed. */
  async end(): Promise<Part> {
    const { req, answer } = this.put;
    if (this.failed || req.destroyed) return this.again();
    if (req.writableCorked > 0) req.uncork();
    req.end();
    this.done(this.held);
    return { number: this.number, size: this.size, etag: await answer };
  }

  private async again(): Promise<Part> {
    try {
      const { req, answer } = partRequest(this.address, this.size);
      req.end(this.held.subarray(0, this.size));
      return { number: this.number, size: this.size, etag: await answer };
    } finally {
      this.done(this.held);
    }
  }

  /** Stops sending the part (the store drops what it got of it); the bytes it had received. */
  abandon(): Buffer {
    this.put.req.destroy();
    return this.held.subarray(0, this.received);
  }
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
    /** Bytes of the parts begun so far (landed, in flight, and the one being sent). */
    let begun = stored();
    /** Parts sent whole, waiting for the store's answer, oldest first. */
    const inFlight: Promise<Part>[] = [];
    let current: PartUpload | undefined;
    /** Part-sized buffers to hold a part's bytes in, each used again once its part is sent. */
    const spare: Buffer[] = [];
    const hold = () => spare.pop() ?? Buffer.allocUnsafe(from.partBytes);
    /**
     * Waits for the oldest part in flight and records it; with `durable`, commits the state it makes. Parts
     * land in the order they were sent, so the landed ones are always the first ones.
     */
    const land = async () => {
      parts.push(await (inFlight.shift() as Promise<Part>));
      // The landed parts hold the tail read back at the start (it went into the first of them).
      const state: S3ResumableState = { ...from, parts: [...parts], offset: stored(), tail: null };
      if (!options.durable || state.offset === from.length) return;
      await options.durable(state);
      await this.release(ref, committed, state);
      committed = state;
    };
    /** Passes bytes on to the part being sent, beginning a part when none is, and ending each as it fills. */
    const take = async (bytes: Buffer) => {
      for (let at = 0; at < bytes.length;) {
        if (!current) {
          const size = Math.min(from.partBytes, from.length - begun);
          if (size <= 0) throw new Error(`more than the ${from.length} bytes the upload declared`);
          current = new PartUpload(this.partAddress(key, from.uploadId, next), next++, size, hold(), (held) => spare.push(held));
          begun += size;
        }
        const piece = bytes.subarray(at, at + current.size - current.received);
        at += piece.length;
        await current.write(piece);
        if (current.received === current.size) {
          const sending = current.end();
          // Awaited in order by land(); a failure must not count as unhandled before then.
          sending.catch(() => undefined);
          inFlight.push(sending);
          current = undefined;
          if (inFlight.length > PARTS_IN_FLIGHT) await land();
        }
      }
    };
    try {
      if (from.tail) await take(await this.readTail(from.tail.key));
      for await (const chunk of source) await take(chunk);
      // A part short of its size when the bytes ended (the request cut, or ended before the upload does)
      // is no part: its bytes become the tail.
      const rest = current ? current.abandon() : Buffer.alloc(0);
      current = undefined;
      while (inFlight.length > 0) await land();
      if (rest.length === 0) return { ...from, parts, offset: stored(), tail: null };
      const tail = { key: `${tailPrefix(key, ref)}${randomBytes(8).toString('hex')}`, size: rest.length };
      await this.client.putObject(this.bucket, tail.key, rest, rest.length, { [SSE_HEADER]: SSE_VALUE });
      return { ...from, parts, offset: stored() + tail.size, tail };
    } finally {
      // A failure leaves parts in flight: they land (or fail) before the error is answered.
      current?.abandon();
      await Promise.allSettled(inFlight);
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
