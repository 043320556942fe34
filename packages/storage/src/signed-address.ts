// Signed tokens of the local store's addresses (`<baseUrl>/blobs/<token>`): an HMAC-SHA256 over the
// object key, the one method it allows, its expiry and, for a GET, the headers it answers with when the
// signer fixed them. Nothing is stored server-side, so any gateway holding the master key can honour an
// address another one issued.
import { timingSafeEqual } from 'node:crypto';
import type { ResponseOverrides } from './blob-store';
import { HmacSha256 } from './hmac';

export type BlobMethod = 'PUT' | 'GET';

interface Claims {
  k: string;
  m: BlobMethod;
  /** Expiry, milliseconds since the epoch. */
  e: number;
  /** The answer's Content-Type and Content-Disposition, when the signer fixed them. */
  r?: { t: string; d: string };
}

/** What a valid token grants: one method on one object key, answered with these headers if it says so. */
export interface OpenedAddress {
  key: string;
  response?: ResponseOverrides;
}

/** Header values are signed into the token and sent back as they are: printable ASCII only. */
const HEADER_VALUE = /^[\x20-\x7e]*$/;

/** Keys are `<address>/<fileId>`, well under this; longer tokens are refused before any work. */
const MAX_TOKEN_LENGTH = 4096;

export class AddressSigner {
  private readonly mac: HmacSha256;

  constructor(key: Buffer) {
    this.mac = new HmacSha256(key);
  }

  sign(objectKey: string, method: BlobMethod, expiresAtMs: number, response?: ResponseOverrides): string {
    // The claims' JSON written out directly: a search signs one address per hit.
    const fixed = response ? `,"r":${JSON.stringify({ t: response.contentType, d: response.disposition })}` : '';
    const claims = `{"k":${JSON.stringify(objectKey)},"m":"${method}","e":${expiresAtMs}${fixed}}`;
    const payload = Buffer.from(claims).toString('base64url');
    return `${payload}.${this.mac.digest(payload)}`;
  }

  /** The object key the token grants `method` on, or null when it is forged, altered, expired or for another method. */
  verify(token: string, method: BlobMethod, nowMs: number): string | null {
    return this.open(token, method, nowMs)?.key ?? null;
  }

  /** What the token grants for `method`, or null when it is forged, altered, expired or for another method. */
  open(token: string, method: BlobMethod, nowMs: number): OpenedAddress | null {
    if (token.length > MAX_TOKEN_LENGTH) return null;
    const [payload, signature, extra] = token.split('.');
    if (!payload || !signature || extra !== undefined) return null;
    const given = Buffer.from(signature, 'base64url');
    const expected = Buffer.from(this.mac.digest(payload), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    const claims = parseClaims(Buffer.from(payload, 'base64url').toString('utf8'));
    if (!claims || claims.m !== method || nowMs > claims.e) return null;
    return claims.r ? { key: claims.k, response: { contentType: claims.r.t, disposition: claims.r.d } } : { key: claims.k };
  }
}

function parseClaims(json: string): Claims | null {
  try {
    const value = JSON.parse(json) as Partial<Claims>;
    const fixed = value.r === undefined || (isHeaderValue(value.r?.t) && isHeaderValue(value.r?.d));
    return typeof value.k === 'string' && (value.m === 'PUT' || value.m === 'GET') && typeof value.e === 'number' && fixed
      ? (value as Claims)
      : null;
  } catch {
    return null;
  }
}

function isHeaderValue(value: unknown): value is string {
  return typeof value === 'string' && HEADER_VALUE.test(value);
}
