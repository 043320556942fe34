// Short-lived service tokens between the cluster's own services (dex → gateway app pushes, gateway →
// dex retirement of a closed instance):
// RS256 with the sender's key, bound to one audience (the instance address) and one scope.
import { randomBytes, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { SigningKeys } from './keys';

export const DEX_ISSUER = 'dex';
/** Scope of the tokens dex's worker signs to deliver certified app records to one instance. */
export const APP_PUSH_SCOPE = 'app-push';
/** Scope of the token an erased instance's purge signs with the instance's own key, for dex (audience DEX_ISSUER). */
export const RETIRE_SCOPE = 'instance-retire';

export interface ServiceTokenClaims {
  iss: string;
  aud: string;
  sub: string;
  scope: string;
  iat: number;
  exp: number;
  jti: string;
}

export function issueServiceToken(
  keys: SigningKeys,
  request: { issuer: string; audience: string; scope: string; ttlSeconds?: number },
  nowSeconds: number,
): string {
  const claims: ServiceTokenClaims = {
    iss: request.issuer,
    aud: request.audience,
    sub: request.issuer,
    scope: request.scope,
    iat: nowSeconds,
    exp: nowSeconds + (request.ttlSeconds ?? 120),
    jti: randomBytes(16).toString('base64url'),
  };
  return jwt.sign(claims, keys.privateKey, { algorithm: 'RS256', keyid: keys.keyId });
}

/** The claims, or null for any token that is not a valid, current service token for this audience and scope. */
export function verifyServiceToken(
  token: string,
  publicKey: KeyObject,
  expected: { issuer: string; audience: string; scope: string },
  nowSeconds: number,
): ServiceTokenClaims | null {
  try {
    const claims = jwt.verify(token, publicKey, {
      algorithms: ['RS256'],
      issuer: expected.issuer,
      audience: expected.audience,
      clockTimestamp: nowSeconds,
    }) as ServiceTokenClaims;
    return claims.scope === expected.scope ? claims : null;
  } catch {
    return null;
  }
}
