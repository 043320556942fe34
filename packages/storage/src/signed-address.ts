// Signed tokens of the local store's addresses (`<baseUrl>/blobs/<token>`): an HMAC-SHA256 over the
// object key, the one method it allows and its expiry. Nothing is stored server-side, so any gateway
// holding the master key can honour an address another one issued.
import { createHmac, createSecretKey, type Hmac, type KeyObject, timingSafeEqual } from 'node:crypto';

export type BlobMethod = 'PUT' | 'GET';

interface Claims {
  k: string;
  m: BlobMethod;
  /** Expiry, milliseconds since the epoch. */
  e: number;
}

/** Keys are `<address>/<fileId>`, well under this; longer tokens are refused before any work. */
const MAX_TOKEN_LENGTH = 4096;

export class AddressSigner {
  /** Imported once: a search signs up to 10,000 addresses, and a raw key is imported on every HMAC. */
  private readonly key: KeyObject;

  constructor(key: Buffer) {
    this.key = createSecretKey(key);
  }

  sign(objectKey: string, method: BlobMethod, expiresAtMs: number): string {
    const claims: Claims = { k: objectKey, m: method, e: expiresAtMs };
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
    // Encoded by digest itself, with no Buffer in between: a search signs one address per hit.
    return `${payload}.${this.mac(payload).digest('base64url')}`;
  }

  /** The object key the token grants `method` on, or null when it is forged, altered, expired or for another method. */
  verify(token: string, method: BlobMethod, nowMs: number): string | null {
    if (token.length > MAX_TOKEN_LENGTH) return null;
    const [payload, signature, extra] = token.split('.');
    if (!payload || !signature || extra !== undefined) return null;
    const given = Buffer.from(signature, 'base64url');
    const expected = this.mac(payload).digest();
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    const claims = parseClaims(Buffer.from(payload, 'base64url').toString('utf8'));
    if (!claims || claims.m !== method || nowMs > claims.e) return null;
    return claims.k;
  }

  private mac(payload: string): Hmac {
    return createHmac('sha256', this.key).update(payload);
  }
}

function parseClaims(json: string): Claims | null {
  try {
    const value = JSON.parse(json) as Partial<Claims>;
    return typeof value.k === 'string' && (value.m === 'PUT' || value.m === 'GET') && typeof value.e === 'number'
      ? (value as Claims)
      : null;
  } catch {
    return null;
  }
}
