// AWS Signature V4 query presigning (path-style S3 URLs) for one store's service, bucket and
// credentials, signing chosen headers besides `host`. minio-js presigns only `host`, but S3 refuses a
// presigned PUT carrying an `x-amz-server-side-encryption` header that was not signed; signing it also
// makes the store itself refuse a PUT without it (SignatureDoesNotMatch), which is how the contract's
// SSE rule is enforced.
//
// Every file answer that may read its content carries a presigned GET, and a search one per hit, so an
// address costs one MAC: the day's signing key (four chained HMACs of the secret) is derived once a day
// rather than per address, as AWS's guide suggests, and the MAC reuses its key's pads (hmac.ts): 5–8 µs
// of CPU per address where minio-js' presignedGetObject took 37–46 (scripts/bench/presign.ts).
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { HmacSha256 } from './hmac';

/** The S3 service and credentials every address of a store is signed for. */
export interface S3Service {
  /** Origin of the S3 service, e.g. `https://s3.eu-west-1.amazonaws.com` or `http://127.0.0.1:9000`. */
  endpoint: URL;
  bucket: string;
  region: string;
  accessKey: string;
  secretKey: string;
}

/** What one address grants, and from when. */
export interface PresignRequest {
  method: string;
  key: string;
  expiresSeconds: number;
  /** Headers the request must carry with exactly these values; names are lower-cased. */
  headers?: Record<string, string>;
  /** Parameters of the operation besides the signature's (UploadPart's `partNumber`, a GET's `response-content-type`). */
  query?: Record<string, string>;
  now: Date;
}

/** S3's URI encoding: everything but unreserved characters, `/` kept in paths. */
function encode(text: string, keepSlash = false): string {
  const encoded = encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return keepSlash ? encoded.replace(/%2F/g, '/') : encoded;
}

const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

/** `20130524T000000Z` of an instant. */
function amzDateOf(now: Date): string {
  const iso = now.toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
}

/** The name of the last of the signature's own parameters, in S3's order. */
const LAST_SIGNING_PARAMETER = 'X-Amz-SignedHeaders';

/** `name=value&…` of the pairs in order of name (byte order, as S3 compares). */
const joinSorted = (pairs: [string, string][]) =>
  pairs
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');

const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

/** The credential scope of one day and the MAC keyed with that day's signing key. */
interface Day {
  day: string;
  scope: string;
  credential: string;
  mac: HmacSha256;
}

export class SigV4Presigner {
  private readonly bucketPath: string;
  private current?: Day;

  constructor(private readonly service: S3Service) {
    this.bucketPath = `/${encode(service.bucket)}/`;
  }

  /** The presigned address of `request.key`. */
  presign(request: PresignRequest): string {
    const amzDate = amzDateOf(request.now);
    const { scope, credential, mac } = this.dayOf(amzDate.slice(0, 8));
    const host = this.service.endpoint.host;
    let signedHeaders = 'host';
    let canonicalHeaders = `host:${host}\n`;
    if (request.headers) {
      const headers: Record<string, string> = { host };
      for (const name in request.headers) headers[name.toLowerCase()] = request.headers[name]!.trim();
      const names = Object.keys(headers).sort();
      signedHeaders = names.join(';');
      canonicalHeaders = names.map((name) => `${name}:${headers[name]}\n`).join('');
    }
    // The parameters sorted by name, as S3 orders them to check the signature; these five already are.
    const signing =
      `X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=${credential}&X-Amz-Date=${amzDate}` +
      `&X-Amz-Expires=${request.expiresSeconds}&X-Amz-SignedHeaders=${encode(signedHeaders)}`;
    let canonicalQuery = signing;
    if (request.query) {
      const pairs: [string, string][] = [];
      for (const name in request.query) pairs.push([encode(name), encode(request.query[name]!)]);
      // The operation's parameters (partNumber, response-content-type) are in lower case, after the five;
      // any other name is sorted in among them.
      if (pairs.every(([name]) => name > LAST_SIGNING_PARAMETER)) canonicalQuery = `${signing}&${joinSorted(pairs)}`;
      else canonicalQuery = joinSorted([...pairs, ...signing.split('&').map((pair) => pair.split('=') as [string, string])]);
    }
    const path = `${this.bucketPath}${encode(request.key, true)}`;
    const canonicalRequest = `${request.method}\n${path}\n${canonicalQuery}\n${canonicalHeaders}\n${signedHeaders}\nUNSIGNED-PAYLOAD`;
    const digest = createHash('sha256').update(canonicalRequest).digest('hex');
    const signature = mac.digest(`AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n${digest}`, 'hex');
    return `${this.service.endpoint.origin}${path}?${canonicalQuery}&X-Amz-Signature=${signature}`;
  }

  /**
   * The object key an address this presigner made grants `method` on (with these required headers),
   * while it has not expired at `now`; null for any other address (another service, bucket, method, an
   * altered or expired one). The address is signed again from what it names and the signatures compared.
   */
  keyOf(address: string, grant: { method: string; headers?: Record<string, string> }, now: Date): string | null {
    let url: URL;
    try {
      url = new URL(address);
    } catch {
      return null;
    }
    if (url.origin !== this.service.endpoint.origin || !url.pathname.startsWith(this.bucketPath)) return null;
    const date = AMZ_DATE.exec(url.searchParams.get('X-Amz-Date') ?? '');
    const expires = Number(url.searchParams.get('X-Amz-Expires'));
    const signature = url.searchParams.get('X-Amz-Signature') ?? '';
    if (!date || !Number.isInteger(expires) || expires <= 0) return null;
    const [, y, mo, d, h, mi, s] = date.map(Number) as number[];
    const signedAt = new Date(Date.UTC(y!, mo! - 1, d, h, mi, s));
    if (now.getTime() > signedAt.getTime() + expires * 1000) return null;
    let key: string;
    try {
      key = decodeURIComponent(url.pathname.slice(this.bucketPath.length));
    } catch {
      return null;
    }
    const again = this.presign({ ...grant, key, expiresSeconds: expires, now: signedAt });
    const expected = Buffer.from(again.slice(again.lastIndexOf('=') + 1));
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected) ? key : null;
  }

  /** The day's scope and MAC; derived again only when the day changes (an address for another day derives its own). */
  private dayOf(day: string): Day {
    if (this.current?.day === day) return this.current;
    const { region, accessKey, secretKey } = this.service;
    const signingKey = hmac(hmac(hmac(hmac(`AWS4${secretKey}`, day), region), 's3'), 'aws4_request');
    const scope = `${day}/${region}/s3/aws4_request`;
    const found: Day = { day, scope, credential: encode(`${accessKey}/${scope}`), mac: new HmacSha256(signingKey) };
    // keyOf re-signs addresses of earlier days: today's stays the one kept.
    if (!this.current || day > this.current.day) this.current = found;
    return found;
  }
}
