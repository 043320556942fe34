// The local store's file format.
//
// File format: magic (4) | IV (12) | type length (1) | content type | sealed key | AES-256-GCM ciphertext | tag (16).
// The content type is kept so GETs answer with it, as S3 does. The object key and the type are the GCM
// additional data, so a file copied under another key, or with another type, fails to decrypt; a
// trashed object's key is its key outside the trash, so the trash's moves are renames. The sealed
// key (IV (12) | length (2) | key encrypted under a key of its own | tag (16)) is what a listing reads: names
// on disk do not reveal keys. A file is `<SHA-256 of the key's first segment>/<SHA-256 of the key>`: no key
// can name a path outside the store, whatever characters it holds, and one instance's objects (keys
// `<address>/…`) share one folder, which a listing of that prefix reads alone.
// Files of the first format (magic PDB1, no sealed key, under `<first 2 hex of the name>/<SHA-256 of the
// key>`) are still read, stat-ed and removed by key, but not listed.
//
// Objects written piece by piece across requests (resumable uploads, local/resumable.ts) use a third
// format, in records: magic PDB3 | size (8) | type length (1) | content type | sealed key | records, each
// length (4) | IV (12) | AES-256-GCM ciphertext | tag (16). One GCM stream cannot be carried from one
// request to the next (nor rewound past bytes a cut request wrote but never acknowledged), so each record
// is sealed on its own, with a fresh IV: bytes are never encrypted twice under one IV, even when a resumed
// upload writes over what a cut one left. Each record's additional data is the whole-object data (key,
// type), the object's size and the record's offset in it: records cannot be moved, dropped or swapped, nor
// the size altered, without failing to decrypt.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export const MAGIC = Buffer.from('PDB2');
const LEGACY_MAGIC = Buffer.from('PDB1');
export const RECORDS_MAGIC = Buffer.from('PDB3');
export const IV_BYTES = 12;
export const TAG_BYTES = 16;
const FIXED_HEADER_BYTES = MAGIC.length + IV_BYTES + 1;
/** Magic, size (8), type length (1). */
const RECORDS_FIXED_BYTES = RECORDS_MAGIC.length + 8 + 1;
/** A record's length (4) and IV before its ciphertext, its tag after. */
export const RECORD_HEAD_BYTES = 4 + IV_BYTES;
export const RECORD_OVERHEAD = RECORD_HEAD_BYTES + TAG_BYTES;
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

/** What precedes the bytes of an object, in either format. */
export type Header = {
  contentType: string;
  /** Absent in the first format. */
  sealedKey?: Buffer;
  /** Bytes before the ciphertext (or the first record). */
  bytes: number;
  /** The object's size in bytes (its plaintext). */
  size: number;
} & ({ format: 'whole'; iv: Buffer } | { format: 'records' });

/** The header of an object in records (a resumable upload's): its declared size is written first. */
export function recordsHeader(size: number, contentType: Buffer, sealedKey: Buffer): Buffer {
  const fixed = Buffer.alloc(RECORDS_FIXED_BYTES);
  RECORDS_MAGIC.copy(fixed);
  fixed.writeBigUInt64BE(BigInt(size), RECORDS_MAGIC.length);
  fixed[RECORDS_FIXED_BYTES - 1] = contentType.length;
  return Buffer.concat([fixed, contentType, sealedKey]);
}

/** A record's additional data: the object's (key, type), its size and the record's offset in it. */
export function recordData(objectData: Buffer, size: number, offset: number): Buffer {
  const numbers = Buffer.alloc(16);
  numbers.writeBigUInt64BE(BigInt(size), 0);
  numbers.writeBigUInt64BE(BigInt(offset), 8);
  return Buffer.concat([objectData, numbers]);
}

/** The header at the start of `bytes` (the first read of a file of `fileSize` bytes); `label` names the object in errors. */
export function parseHeader(bytes: Buffer, fileSize: number, label: string): Header {
  const magic = bytes.subarray(0, MAGIC.length);
  if (magic.equals(RECORDS_MAGIC)) return parseRecordsHeader(bytes, fileSize, label);
  const legacy = magic.equals(LEGACY_MAGIC);
  if (bytes.length < FIXED_HEADER_BYTES || !(legacy || magic.equals(MAGIC))) {
    throw new Error(`stored blob of ${label} has an unknown format`);
  }
  const typeEnd = FIXED_HEADER_BYTES + (bytes[FIXED_HEADER_BYTES - 1] as number);
  const keyLength = legacy || bytes.length < typeEnd + IV_BYTES + 2 ? 0 : bytes.readUInt16BE(typeEnd + IV_BYTES);
  const headerBytes = legacy ? typeEnd : typeEnd + IV_BYTES + 2 + keyLength + TAG_BYTES;
  if (fileSize < headerBytes + TAG_BYTES || bytes.length < headerBytes) throw new Error(`stored blob of ${label} is truncated`);
  return {
    format: 'whole',
    iv: bytes.subarray(MAGIC.length, MAGIC.length + IV_BYTES),
    contentType: bytes.subarray(FIXED_HEADER_BYTES, typeEnd).toString('latin1'),
    ...(legacy ? {} : { sealedKey: bytes.subarray(typeEnd, headerBytes) }),
    bytes: headerBytes,
    size: fileSize - headerBytes - TAG_BYTES,
  };
}

function parseRecordsHeader(bytes: Buffer, fileSize: number, label: string): Header {
  if (bytes.length < RECORDS_FIXED_BYTES) throw new Error(`stored blob of ${label} is truncated`);
  const typeEnd = RECORDS_FIXED_BYTES + (bytes[RECORDS_FIXED_BYTES - 1] as number);
  const keyLength = bytes.length < typeEnd + IV_BYTES + 2 ? 0 : bytes.readUInt16BE(typeEnd + IV_BYTES);
  const headerBytes = typeEnd + IV_BYTES + 2 + keyLength + TAG_BYTES;
  if (fileSize < headerBytes || bytes.length < headerBytes) throw new Error(`stored blob of ${label} is truncated`);
  return {
    format: 'records',
    contentType: bytes.subarray(RECORDS_FIXED_BYTES, typeEnd).toString('latin1'),
    sealedKey: bytes.subarray(typeEnd, headerBytes),
    bytes: headerBytes,
    size: Number(bytes.readBigUInt64BE(RECORDS_MAGIC.length)),
  };
}
