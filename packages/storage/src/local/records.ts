// Sealing and opening the records of an object written piece by piece (format.ts, "records"): each
// record is encrypted on its own, with a fresh IV, and checked whole before any of its bytes go out.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { IV_BYTES, RECORD_HEAD_BYTES, recordData, TAG_BYTES } from './format';
import { readAt } from './streaming';

/** What the records of one object are sealed with: the store's data key, the object's data, its size. */
export interface RecordKeys {
  dataKey: Buffer;
  /** additionalData(key, type) of format.ts. */
  objectData: Buffer;
  size: number;
}

/** One record of `plaintext` at `offset` of the object: length | IV | ciphertext | tag, as buffers to write in a row. */
export function sealRecord(keys: RecordKeys, offset: number, plaintext: Buffer): Buffer[] {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keys.dataKey, iv).setAAD(recordData(keys.objectData, keys.size, offset));
  const head = Buffer.alloc(RECORD_HEAD_BYTES);
  head.writeUInt32BE(plaintext.length, 0);
  iv.copy(head, 4);
  const ciphertext = cipher.update(plaintext);
  cipher.final();
  return [head, ciphertext, cipher.getAuthTag()];
}

/**
 * The plaintext of the records from `position` to the end of the file, record by record, each checked
 * before it is given out. Fails when a record does not open, or when they do not add up to `keys.size`.
 * Each record is read with the head of the next one, into one reused buffer.
 */
export async function* openRecords(file: FileHandle, keys: RecordKeys, position: number, fileSize: number): AsyncGenerator<Buffer> {
  let offset = 0;
  let buffer = Buffer.allocUnsafe(0);
  let head = fileSize - position >= RECORD_HEAD_BYTES ? await readAt(file, position, RECORD_HEAD_BYTES) : undefined;
  if (!head && position !== fileSize) throw new Error('stored blob is truncated or altered (bytes after its header)');
  while (head) {
    const length = head.readUInt32BE(0);
    const iv = Buffer.from(head.subarray(4, RECORD_HEAD_BYTES));
    const bodyAt = position + RECORD_HEAD_BYTES;
    const end = bodyAt + length + TAG_BYTES;
    if (end > fileSize || offset + length > keys.size) throw new Error('stored blob is truncated or altered (a record runs past its end)');
    // The next record's head comes with this one, when there is one.
    const nextHead = fileSize - end >= RECORD_HEAD_BYTES ? RECORD_HEAD_BYTES : 0;
    const want = length + TAG_BYTES + nextHead;
    if (buffer.length < want) buffer = Buffer.allocUnsafe(want);
    const read = await readAt(file, bodyAt, want, buffer);
    const decipher = createDecipheriv('aes-256-gcm', keys.dataKey, iv).setAAD(recordData(keys.objectData, keys.size, offset));
    decipher.setAuthTag(read.subarray(length, length + TAG_BYTES));
    let plaintext: Buffer;
    try {
      plaintext = Buffer.concat([decipher.update(read.subarray(0, length)), decipher.final()]);
    } catch {
      throw new Error('stored blob failed its integrity check');
    }
    offset += length;
    position = end;
    head = nextHead ? Buffer.from(read.subarray(length + TAG_BYTES, want)) : undefined;
    if (!head && position !== fileSize) throw new Error('stored blob is truncated or altered (bytes after its last record)');
    yield plaintext;
  }
  if (offset !== keys.size) throw new Error('stored blob is truncated (its records hold fewer bytes than its size)');
}
