// A PATCH's bytes as the store takes them: never more than the upload has left, hashed when the client
// sent a checksum, and ended cleanly when the connection is cut (the client killed, the network gone, or
// silent for too long), so every byte that did arrive is kept. Between pieces it asks whether the upload
// may still go on (its file still New, its instance still active) and stops when not.
import type { Hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ApiError, arrivingBytes } from '@pds/http';
import { RESUMABLE } from './protocol';

/** How often (in bytes) a request asks again whether its upload may go on. */
const CHECK_EVERY_BYTES = 16 * 1024 * 1024;

export interface BodyRules {
  /** The most bytes it may bring: what is left of the declared length. */
  limit: number;
  /** No byte for this long and the connection is taken as lost (and closed). */
  idleMs: number;
  /** Throws when the upload may no longer take bytes. */
  check(): Promise<void>;
  /** Fed every byte, when the client sent Upload-Checksum. */
  hash?: Hash;
}

/** 413 for bytes past the declared length; closing stops a client that keeps sending a body the gateway will not read. */
export function pastLength(limit: number): ApiError {
  return new ApiError(413, 'Payload Too Large', `The upload takes ${limit} more bytes (its declared Upload-Length)`, {
    headers: { ...RESUMABLE, Connection: 'close' },
  });
}

export class UploadBody implements AsyncIterable<Buffer> {
  /** The connection ended before the body did. */
  cut = false;
  received = 0;

  constructor(
    private readonly req: IncomingMessage,
    private readonly rules: BodyRules,
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    const { req, rules } = this;
    let checked = 0;
    // Idle is the client's silence while the gateway waits for its bytes: not the time the store takes
    // with the last ones (a slow store holds the client back, and must not end its request).
    const chunks = arrivingBytes(req, rules.idleMs);
    try {
      for (;;) {
        let next: IteratorResult<Buffer>;
        try {
          next = await chunks.next();
        } catch {
          // Aborted, reset, or destroyed for idling: what arrived is kept.
          this.cut = true;
          return;
        }
        if (next.done) {
          // A body that ends short of its Content-Length is a connection cut as well.
          this.cut = !req.complete;
          return;
        }
        const chunk = next.value;
        this.received += chunk.length;
        if (this.received > rules.limit) throw pastLength(rules.limit);
        if (this.received - checked >= CHECK_EVERY_BYTES) {
          checked = this.received;
          await rules.check();
        }
        rules.hash?.update(chunk);
        yield chunk;
      }
    } finally {
      await chunks.return(undefined);
    }
  }
}
