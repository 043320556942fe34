// Instance-issued tokens at dex: verified by their `iss` against the key dex stored for that address.
// Only registered instances count; a key-mismatch instance's tokens are refused until re-certified.
import { createPublicKey } from 'node:crypto';
import type { RegisteredInstanceRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import { epochSeconds, readUnverified, TokenRefused, verifyToken, VerifiedTokenCache, type Clock, type TokenClaims } from '@pds/tokens';

export class InstanceTokenVerifier {
  constructor(
    private readonly instances: RegisteredInstanceRepository,
    private readonly clock: Clock,
    private readonly cache = new VerifiedTokenCache(10_000),
  ) {}

  /** The token's claims, or a 401 for a missing, malformed, expired or unverifiable token. */
  async verify(token: string | undefined): Promise<TokenClaims> {
    if (!token) throw ApiError.notAuthenticated();
    const now = epochSeconds(this.clock);
    try {
      const iss = readUnverified(token).claims.iss;
      if (typeof iss !== 'string') throw new TokenRefused('malformed');
      const instance = await this.instances.find(iss.toLowerCase());
      if (!instance || instance.state !== 'registered' || !instance.publicKeyPem || !instance.fingerprint)
        throw new TokenRefused('wrong instance');
      // The fingerprint is part of the cache scope: a re-certified key never reuses old verdicts.
      const scope = `${instance.address} ${instance.fingerprint}`;
      const cached = this.cache.get(scope, token, now);
      if (cached) return cached;
      const claims = verifyToken(token, createPublicKey(instance.publicKeyPem), iss, now);
      this.cache.set(scope, token, claims, now);
      return claims;
    } catch (error) {
      if (error instanceof TokenRefused) throw ApiError.notAuthenticated();
      throw error;
    }
  }
}
