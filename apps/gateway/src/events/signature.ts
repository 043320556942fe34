// The signature of a webhook delivery: an RS256 JWS with a detached payload (RFC 7515, appendix F) over
// the exact body bytes, in the `X-PDS-Signature` header as `<header>..<signature>`. A receiver checks it
// with the instance's /publickey alone (docs/events.md has a ten-line example).
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-pds-signature';

const b64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

/** The header value for `body`, signed with the instance's private key (`kid`: its key id, `iss`: its address). */
export function signBody(body: string, privateKey: string | KeyObject, keyId: string, issuer: string): string {
  const header = b64url(JSON.stringify({ alg: 'RS256', kid: keyId, iss: issuer, b64: true }));
  const signature = sign(
    'sha256',
    Buffer.from(`${header}.${b64url(body)}`),
    typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey,
  );
  return `${header}..${b64url(signature)}`;
}

/** Whether `signature` is the instance's over `body` (what a receiver does; the tests use it too). */
export function verifyBody(body: string, signature: string, publicKeyPem: string): boolean {
  const [header, empty, value] = signature.split('.');
  if (!header || empty !== '' || !value) return false;
  try {
    if ((JSON.parse(Buffer.from(header, 'base64url').toString()) as { alg?: string }).alg !== 'RS256') return false;
  } catch {
    return false;
  }
  return verify('sha256', Buffer.from(`${header}.${b64url(body)}`), createPublicKey(publicKeyPem), Buffer.from(value, 'base64url'));
}
