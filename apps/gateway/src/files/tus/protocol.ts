// The words of tus 1.0 (https://tus.io/protocols/resumable-upload): the version, the extensions served,
// and the request headers read, each refused with the status the protocol names when it is wrong.
import type { IncomingMessage } from 'node:http';
import { ApiError } from '@pds/http';

export const TUS_VERSION = '1.0.0';
export const EXTENSIONS = 'creation,termination,expiration,checksum';
export const CHECKSUM_ALGORITHMS = 'sha256';
/** Every tus answer carries it (the protocol asks for it on all but OPTIONS; it costs nothing there). */
export const RESUMABLE = { 'Tus-Resumable': TUS_VERSION };
export const PATCH_TYPE = 'application/offset+octet-stream';
/** Answers without a body that a client will read the headers of: never from a cache. */
export const NO_STORE = { 'Cache-Control': 'no-store' };

/** The headers a browser app on another origin sends and reads (cors.ts allows and exposes them). */
export const TUS_REQUEST_HEADERS = ['Tus-Resumable', 'Upload-Length', 'Upload-Offset', 'Upload-Metadata', 'Upload-Checksum'];
export const TUS_RESPONSE_HEADERS = [
  'Location',
  'Tus-Resumable',
  'Tus-Version',
  'Tus-Extension',
  'Tus-Max-Size',
  'Tus-Checksum-Algorithm',
  'Upload-Offset',
  'Upload-Length',
  'Upload-Expires',
];

const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** 412 for a request without the version this server speaks (the protocol's answer names it). */
export function requireVersion(req: IncomingMessage): void {
  if (header(req, 'tus-resumable') !== TUS_VERSION) {
    throw new ApiError(412, 'Precondition Failed', `This server speaks tus ${TUS_VERSION}: send Tus-Resumable: ${TUS_VERSION}`, {
      headers: { 'Tus-Version': TUS_VERSION },
    });
  }
}

/** A non-negative integer header (Upload-Length, Upload-Offset); 400 when absent or not one. */
export function byteCount(req: IncomingMessage, name: string): number {
  const value = header(req, name.toLowerCase());
  if (value === undefined) throw ApiError.badRequest(`${name} is required`);
  if (!/^\d{1,16}$/.test(value) || !Number.isSafeInteger(Number(value))) throw ApiError.badRequest(`${name} must be a number of bytes`);
  return Number(value);
}

const METADATA_KEY = /^[\x21-\x2b\x2d-\x7e]+$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Upload-Metadata: comma-separated `key base64(value)` pairs (a value may be absent); 400 when malformed. */
export function metadataOf(req: IncomingMessage): Record<string, string> {
  const value = header(req, 'upload-metadata');
  const metadata: Record<string, string> = {};
  if (!value) return metadata;
  if (value.length > 16 * 1024) throw ApiError.badRequest('Upload-Metadata is limited to 16 KiB');
  for (const pair of value.split(',')) {
    const [key = '', encoded = '', extra] = pair.trim().split(' ');
    if (!METADATA_KEY.test(key) || !BASE64.test(encoded) || extra !== undefined || Object.hasOwn(metadata, key)) {
      throw ApiError.badRequest('Upload-Metadata must be comma-separated pairs of a key and its value in base64, each key once');
    }
    metadata[key] = Buffer.from(encoded, 'base64').toString('utf8');
  }
  return metadata;
}

/** Upload-Checksum: `sha256 <base64 digest>`, or undefined when absent; 400 for another algorithm or a malformed digest. */
export function checksumOf(req: IncomingMessage): Buffer | undefined {
  const value = header(req, 'upload-checksum');
  if (value === undefined) return undefined;
  const [algorithm, encoded = '', extra] = value.trim().split(' ');
  if (algorithm !== 'sha256') throw ApiError.badRequest(`Upload-Checksum: the algorithms served are ${CHECKSUM_ALGORITHMS}`);
  const digest = Buffer.from(encoded, 'base64');
  if (extra !== undefined || !BASE64.test(encoded) || digest.length !== 32)
    throw ApiError.badRequest('Upload-Checksum: a SHA-256 digest is 32 bytes in base64');
  return digest;
}

export function checksumMismatch(): ApiError {
  return new ApiError(460, 'Checksum Mismatch', 'The bytes do not match Upload-Checksum; none of them were stored', {
    headers: RESUMABLE,
  });
}

/** 415 for a PATCH whose body is not declared as upload bytes. */
export function requirePatchType(req: IncomingMessage): void {
  if (header(req, 'content-type')?.split(';')[0]?.trim().toLowerCase() !== PATCH_TYPE) {
    throw new ApiError(415, 'Unsupported Media Type', `A PATCH carries Content-Type: ${PATCH_TYPE}`, { headers: RESUMABLE });
  }
}

/** The Content-Length a request declares, or undefined (a chunked body). */
export function declaredLength(req: IncomingMessage): number | undefined {
  const value = header(req, 'content-length');
  return value === undefined ? undefined : Number(value);
}

/** Upload-Expires: an HTTP date. */
export const httpDate = (at: Date) => at.toUTCString();
