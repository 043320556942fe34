// AWS Signature V4 query presigning (path-style S3 URLs) that signs chosen headers besides `host`.
// minio-js presigns only `host`, but S3 refuses a presigned PUT carrying an
// `x-amz-server-side-encryption` header that was not signed; signing it also makes the store itself
// refuse a PUT without it (SignatureDoesNotMatch), which is how the contract's SSE rule is enforced.
import { createHash, createHmac } from 'node:crypto';

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
