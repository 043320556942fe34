// The local store's file format.
//
// File format: magic (4) | IV (12) | type length (1) | content type | sealed key | AES-256-GCM ciphertext | tag (16).
// The content type is kept so GETs answer with it, as S3 does. The object key and the type are the GCM
// additional data, so a file copied under another key, or with another type, fails to decrypt. The sealed
// key (IV (12) | length (2) | key encrypted under a key of its own | tag (16)) is what a listing reads: names
// on disk do not reveal keys. A file is `<SHA-256 of the key's first segment>/<SHA-256 of the key>`: no key
// can name a path outside the store, whatever characters it holds, and one instance's objects (keys
// `<address>/…`) share one folder, which a listing of that prefix reads alone.
// Files of the first format (magic PDB1, no sealed key, under `<first 2 hex of the name>/<SHA-256 of the
// key>`) are still read, stat-ed and removed by key, but not listed.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export const MAGIC = Buffer.from('PDB2');
const LEGACY_MAGIC = Buffer.from('PDB1');
export const IV_BYTES = 12;
export const TAG_BYTES = 16;
const FIXED_HEADER_BYTES = MAGIC.length + IV_BYTES + 1;
/** Longer than any key this product forms (an address of ≤ 253 characters, a fileId of ≤ 1,290). */
export const MAX_KEY_BYTES = 2048;
/** The longest header, which one read at the start of a file always brings whole. */
export const MAX_HEADER_BYTES = FIXED_HEADER_BYTES + 255 + IV_BYTES + 2 + MAX_KEY_BYTES + TAG_BYTES;
/** Folder and file names of this format: a SHA-256 in hex. */
export const HASH_NAME = /^[0-9a-f]{64}$/;

export function hashName(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** IV | key length (2) | encrypted key | tag, under the names key. */
export function sealKey(nameKey: Buffer, key: Buffer): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', nameKey, iv);
  const length = Buffer.alloc(2);
  length.writeUInt16BE(key.length);
  return Buffer.concat([iv, length, cipher.update(key), cipher.final(), cipher.getAuthTag()]);
}

export function unsealKey(nameKey: Buffer, sealed: Buffer, file: string): string {
  const length = sealed.readUInt16BE(IV_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', nameKey, sealed.subarray(0, IV_BYTES));
  decipher.setAuthTag(sealed.subarray(IV_BYTES + 2 + length));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + 2, IV_BYTES + 2 + length)), decipher.final()]).toString();
  } catch {
    throw new Error(`stored blob ${file} has a key that does not open (altered, or another master key)`);
  }
}

export function additionalData(key: string, contentType: Buffer): Buffer {
  return Buffer.concat([Buffer.from(key), Buffer.from([0]), contentType]);
}

interface Header {
  iv: Buffer;
  contentType: string;
  /** Absent in the first format. */
  sealedKey?: Buffer;
  /** Bytes before the ciphertext. */
  bytes: number;
}

/** The header at the start of `bytes` (the first read of a file of `fileSize` bytes); `label` names the object in errors. */
export function parseHeader(bytes: Buffer, fileSize: number, label: string): Header {
  const magic = bytes.subarray(0, MAGIC.length);
  const legacy = magic.equals(LEGACY_MAGIC);
  if (bytes.length < FIXED_HEADER_BYTES || !(legacy || magic.equals(MAGIC))) {
    throw new Error(`stored blob of ${label} has an unknown format`);
  }
  const typeEnd = FIXED_HEADER_BYTES + (bytes[FIXED_HEADER_BYTES - 1] as number);
  const keyLength = legacy || bytes.length < typeEnd + IV_BYTES + 2 ? 0 : bytes.readUInt16BE(typeEnd + IV_BYTES);
  const headerBytes = legacy ? typeEnd : typeEnd + IV_BYTES + 2 + keyLength + TAG_BYTES;
  if (fileSize < headerBytes + TAG_BYTES || bytes.length < headerBytes) throw new Error(`stored blob of ${label} is truncated`);
  return {
    iv: bytes.subarray(MAGIC.length, MAGIC.length + IV_BYTES),
    contentType: bytes.subarray(FIXED_HEADER_BYTES, typeEnd).toString('latin1'),
    ...(legacy ? {} : { sealedKey: bytes.subarray(typeEnd, headerBytes) }),
    bytes: headerBytes,
  };
}
