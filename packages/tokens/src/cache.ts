// Remembers tokens whose signature has been verified, so RSA verification runs once per token.
// Entries expire with the token; the key includes the verifying instance so a token is only ever
// reused where it was verified.
import { LRUCache } from 'lru-cache';
import type { TokenClaims } from './jwt';

export class VerifiedTokenCache {
  private readonly entries: LRUCache<string, TokenClaims>;

  constructor(
    maxEntries = 50_000,
    /** Counts lookups for the hit-ratio metric (a Metrics.cache counter of @pds/http). */
    private readonly stats?: { hit(): void; miss(): void },
  ) {
    this.entries = new LRUCache({ max: maxEntries });
  }

  get(scope: string, token: string, nowSeconds: number): TokenClaims | undefined {
    const claims = this.entries.get(`${scope} ${token}`);
    if (claims && claims.exp <= nowSeconds) {
      this.entries.delete(`${scope} ${token}`);
      this.stats?.miss();
      return undefined;
    }
    if (claims) this.stats?.hit();
    else this.stats?.miss();
    return claims;
  }

  set(scope: string, token: string, claims: TokenClaims, nowSeconds: number): void {
    const ttlMs = (claims.exp - nowSeconds) * 1000;
    if (ttlMs > 0) this.entries.set(`${scope} ${token}`, claims, { ttl: ttlMs });
  }
}
