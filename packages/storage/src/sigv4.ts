// AWS Signature V4 query presigning (path-style S3 URLs) that signs chosen headers besides `host`.
// minio-js presigns only `host`, but S3 refuses a presigned PUT carrying an
// `x-amz-server-side-encryption` header that was not signed; signing it also makes the store itself
// refuse a PUT without it (SignatureDoesNotMatch), which is how the contract's SSE rule is enforced.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export interface PresignRequest {
  method: string;
  /** Origin of the S3 service, e.g. `https://s3.eu-west-1.amazonaws.com` or `http://127.0.0.1:9000`. */
  endpoint: URL;
  bucket: string;
  key: string;
  region: string;
  accessKey: string;
  secretKey: string;
  expiresSeconds: number;
  /** Headers the request must carry with exactly these values; names are lower-cased. */
  headers: Record<string, string>;
  /** Parameters of the operation besides the signature's (UploadPart's `partNumber` and `uploadId`). */
  query?: Record<string, string>;
  now: Date;
}

/** S3's URI encoding: everything but unreserved characters, `/` kept in paths. */
function encode(text: string, keepSlash = false): string {
  const encoded = encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return keepSlash ? encoded.replace(/%2F/g, '/') : encoded;
}

const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();
const sha256Hex = (data: string) => createHash('sha256').update(data).digest('hex');

export function presignV4(request: PresignRequest): string {
  const amzDate = request.now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const scope = `${day}/${request.region}/s3/aws4_request`;
  const headers: Record<string, string> = { host: request.endpoint.host };
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value.trim();
  const headerNames = Object.keys(headers).sort();
  const signedHeaders = headerNames.join(';');

  const path = `/${encode(request.bucket)}/${encode(request.key, true)}`;
  const query: [string, string][] = [
    ['X-Amz-Algorithm', 'AWS4-HMAC-SHA256'],
    ['X-Amz-Credential', `${request.accessKey}/${scope}`],
    ['X-Amz-Date', amzDate],
    ['X-Amz-Expires', String(request.expiresSeconds)],
    ['X-Amz-SignedHeaders', signedHeaders],
    ...Object.entries(request.query ?? {}),
  ];
  const canonicalQuery = query
    .map(([k, v]) => [encode(k), encode(v)])
    .sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const canonicalRequest = [
    request.method,
    path,
    canonicalQuery,
    headerNames.map((name) => `${name}:${headers[name]}\n`).join(''),
    signedHeaders,
    'UNSIGNED-PAYLOAD',
  ].join('\n');
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const signingKey = ['s3', 'aws4_request'].reduce(
    (key, part) => hmac(key, part),
    hmac(hmac(`AWS4${request.secretKey}`, day), request.region),
  );
  const signature = hmac(signingKey, stringToSign).toString('hex');
  return `${request.endpoint.origin}${path}?${canonicalQuery}&X-Amz-Signature=${signature}`;
}

/** What signed an address: the service, bucket and credentials presignV4 was given, and the headers it required. */
export type PresignSigner = Omit<PresignRequest, 'key' | 'expiresSeconds' | 'now'>;

const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

/**
 * The object key an address presignV4 made with these settings grants `method` on, while it has not
 * expired at `now`; null for any other address (another service, bucket, method, an altered or expired
 * one). The address is signed again from what it names and the signatures compared.
 */
export function presignedKey(address: string, signer: PresignSigner, now: Date): string | null {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return null;
  }
  const bucketPath = `/${encode(signer.bucket)}/`;
  if (url.origin !== signer.endpoint.origin || !url.pathname.startsWith(bucketPath)) return null;
  const date = AMZ_DATE.exec(url.searchParams.get('X-Amz-Date') ?? '');
  const expires = Number(url.searchParams.get('X-Amz-Expires'));
  const signature = url.searchParams.get('X-Amz-Signature') ?? '';
  if (!date || !Number.isInteger(expires) || expires <= 0) return null;
  const [, y, mo, d, h, mi, s] = date.map(Number) as number[];
  const signedAt = new Date(Date.UTC(y!, mo! - 1, d, h, mi, s));
  if (now.getTime() > signedAt.getTime() + expires * 1000) return null;
  let key: string;
  try {
    key = decodeURIComponent(url.pathname.slice(bucketPath.length));
  } catch {
    return null;
  }
  const expected = new URL(presignV4({ ...signer, key, expiresSeconds: expires, now: signedAt })).searchParams.get('X-Amz-Signature') ?? '';
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, Buffer.from(expected)) ? key : null;
}
