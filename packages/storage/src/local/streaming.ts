// Moving an object's bytes between the disk and a stream: large reads and batched writes, decryption in
// pieces with the tag checked before the last one goes out.
import type { DecipherGCM } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { TAG_BYTES } from './format';

/**
 * Disk reads and writes move up to this many bytes at a time: far fewer system calls and stream
 * hand-offs than the 16/64 KiB stream defaults, while a transfer still holds only a few such buffers.
 */
const IO_CHUNK_BYTES = 1024 * 1024;
/**
 * Decrypted bytes go out in pieces of this size, the latest held back until the tag has verified: the
 * rest of a chunk travels to the client while the next piece is decrypted, and an altered file still
 * never reaches a reader complete.
 */
const SEND_PIECE_BYTES = 256 * 1024;

/** How many bytes to read at `position`: a chunk, stretched so that the tag is never split between two reads. */
export function chunkLength(position: number, fileSize: number): number {
  const left = fileSize - position;
  return left - IO_CHUNK_BYTES < TAG_BYTES ? left : IO_CHUNK_BYTES;
}

/** `length` bytes at `position`, read into `into` when given (it must be long enough), else a new buffer. */
export async function readAt(file: FileHandle, position: number, length: number, into?: Buffer): Promise<Buffer> {
  const buffer = into ? into.subarray(0, length) : Buffer.allocUnsafe(length);
  for (let filled = 0; filled < length;) {
    const { bytesRead } = await file.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) throw new Error('stored blob is shorter than its header says');
    filled += bytesRead;
  }
  return buffer;
}

/**
 * Decrypts the file from its first bytes past the header, `start.read`, which end at offset `start.until`
 * (read already with the header). The last read of the file ends with the tag, checked before the final
 * piece goes out. Later reads all go into one buffer: decryption copies out of it, and a download
 * allocating a new MiB per MiB read made a large gateway heap collect often (GC was ≈ 45 % of the
 * product's busy time in the streams part of a full bench run).
 */
export async function* decryptChunks(
  file: FileHandle,
  decipher: DecipherGCM,
  start: { read: Buffer; until: number; fileSize: number },
): AsyncGenerator<Buffer> {
  const { fileSize } = start;
  let held: Buffer | undefined;
  let chunk = start.read;
  let readBuffer: Buffer | undefined;
  for (let position = start.until; ;) {
    const last = position === fileSize;
    const ciphertext = last ? chunk.subarray(0, chunk.length - TAG_BYTES) : chunk;
    if (last) decipher.setAuthTag(chunk.subarray(chunk.length - TAG_BYTES));
    for (let offset = 0; offset < ciphertext.length; offset += SEND_PIECE_BYTES) {
      if (held) yield held;
      held = decipher.update(ciphertext.subarray(offset, offset + SEND_PIECE_BYTES));
    }
    if (last) break;
    // The largest read: a chunk stretched by less than a tag.
    readBuffer ??= Buffer.allocUnsafe(IO_CHUNK_BYTES + TAG_BYTES);
    chunk = await readAt(file, position, chunkLength(position, fileSize), readBuffer);
    position += chunk.length;
  }
  let final: Buffer;
  try {
    final = decipher.final();
  } catch {
    throw new Error('stored blob failed its integrity check');
  }
  yield held ? Buffer.concat([held, final]) : final;
}

/**
 * Collects small buffers into IO_CHUNK_BYTES writes and keeps one write in flight while the next batch
 * fills, so the source is read while the disk writes (and waits when the disk is slower: backpressure).
 */
export class BatchedWriter {
  private batch: Buffer[] = [];
  private batchBytes = 0;
  private inFlight: Promise<void> = Promise.resolve();

  constructor(private readonly file: FileHandle) {}

  async add(buffer: Buffer): Promise<void> {
    this.batch.push(buffer);
    this.batchBytes += buffer.length;
    if (this.batchBytes >= IO_CHUNK_BYTES) await this.flush();
  }

  /** Writes what is left and waits for every write. */
  async end(): Promise<void> {
    await this.flush();
    await this.inFlight;
  }

  /** Waits for the write in flight, ignoring its outcome (for clean-up after a failure). */
  async settle(): Promise<void> {
    await this.inFlight.catch(() => undefined);
  }

  private async flush(): Promise<void> {
    if (this.batchBytes === 0) return;
    const buffers = this.batch;
    this.batch = [];
    this.batchBytes = 0;
    await this.inFlight;
    const write = writeAll(this.file, buffers);
    // A failure surfaces at the next flush, end or settle; until then it must not count as unhandled.
    void write.catch(() => undefined);
    this.inFlight = write;
  }
}

/** One system call for the whole batch, no copy into one buffer first; a write can be partial, this one is not. */
async function writeAll(file: FileHandle, buffers: Buffer[]): Promise<void> {
  let { bytesWritten } = await file.writev(buffers);
  for (const buffer of buffers) {
    // Rare on a regular file: what a short write left goes out as plain writes.
    for (let offset = bytesWritten; offset < buffer.length;)
      offset += (await file.write(buffer, offset, buffer.length - offset)).bytesWritten;
    bytesWritten = Math.max(0, bytesWritten - buffer.length);
  }
}
