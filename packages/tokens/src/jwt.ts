// Access tokens: JWT RS256 signed with the issuing instance's own key, `kid` in the header.
import { randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { KeyObject } from 'node:crypto';
import type { SigningKeys } from './keys';

export type AccessScope = 'owner' | 'user' | 'application';

export interface TokenClaims {
  iss: string;
  sub: string;
  iat: number;
  exp: number;
  jti: string;
  accessScope: AccessScope;
  /** App id, on application tokens only. */
  application?: string;
  /** When the session began (seconds): bounds the sliding refresh. */
  auth_time: number;
}

export const TOKEN_LIFETIME_S = 3 * 24 * 3600;
export const TOKEN_REFRESH_AFTER_S = 3600;
export const SESSION_MAX_S = 30 * 24 * 3600;

export interface IssueRequest {
  issuer: string;
  subject: string;
  accessScope: AccessScope;
  application?: string;
  /** Start of the session being continued; a fresh login when absent. */
  authTime?: number;
}

export function issueToken(keys: SigningKeys, request: IssueRequest, nowSeconds: number): { token: string; claims: TokenClaims } {
  const authTime = request.authTime ?? nowSeconds;
  const claims: TokenClaims = {
    iss: request.issuer,
    sub: request.subject,
    iat: nowSeconds,
    exp: Math.min(nowSeconds + TOKEN_LIFETIME_S, authTime + SESSION_MAX_S),
    jti: randomBytes(16).toString('base64url'),
    accessScope: request.accessScope,
    ...(request.application ? { application: request.application } : {}),
    auth_time: authTime,
  };
  const token = jwt.sign(claims, keys.privateKey, { algorithm: 'RS256', keyid: keys.keyId });
  return { token, claims };
}

/** Why a token was refused; the words are the `cause` of the validate endpoint. */
export type RefusalCause = 'expired' | 'bad signature' | 'wrong instance' | 'unknown user' | 'malformed';

export class TokenRefused extends Error {
  constructor(readonly reason: RefusalCause) {
    super(`token refused: ${reason}`);
  }
}

/** The claims of a token without checking anything, or a `malformed` refusal. */
export function readUnverified(token: string): { header: jwt.JwtHeader; claims: Partial<TokenClaims> } {
  const decoded = token.length <= 8192 ? jwt.decode(token, { complete: true, json: true }) : null;
  if (!decoded || typeof decoded.payload !== 'object') throw new TokenRefused('malformed');
  return { header: decoded.header, claims: decoded.payload as Partial<TokenClaims> };
}

/** Verifies an instance token: RS256 only, issued by `issuer`, not expired, with well-formed claims. */
export function verifyToken(token: string, publicKey: KeyObject, issuer: string, nowSeconds: number): TokenClaims {
  const { header, claims } = readUnverified(token);
  if (claims.iss !== issuer) throw new TokenRefused('wrong instance');
  if (header.alg !== 'RS256') throw new TokenRefused('bad signature');
  let verified: TokenClaims;
  try {
    verified = jwt.verify(token, publicKey, { algorithms: ['RS256'], issuer, clockTimestamp: nowSeconds }) as TokenClaims;
  } catch (error) {
    if (error instanceof jwt.TokenExpiredError) throw new TokenRefused('expired');
    if (error instanceof jwt.JsonWebTokenError && /signature/.test(error.message)) throw new TokenRefused('bad signature');
    throw new TokenRefused('malformed');
  }
  if (!isWellFormed(verified)) throw new TokenRefused('malformed');
  return verified;
}

function isWellFormed(c: TokenClaims): boolean {
  return (
    typeof c.sub === 'string' &&
    typeof c.jti === 'string' &&
    Number.isInteger(c.iat) &&
    Number.isInteger(c.exp) &&
    Number.isInteger(c.auth_time) &&
    (c.accessScope === 'owner' || c.accessScope === 'user' || c.accessScope === 'application') &&
    (c.application === undefined || typeof c.application === 'string')
  );
}
