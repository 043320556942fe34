// Remembers tokens whose signature has been verified, so RSA verification runs once per token.
// Entries expire with the token; the key includes the verifying instance so a token is only ever
// reused where it was verified. Tokens are keyed by their SHA-256 (43 characters, not the ≈ 800 of a
// token): the cache holds an entry per active session, and the gateway's memory per instance counts.
import { hash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { TokenClaims } from './jwt';

export class VerifiedTokenCache {
  private readonly entries: LRUCache<string, TokenClaims>;

  constructor(
    // One session per active instance of a 100,000-instance cluster (the instance registry's size).
    maxEntries = 100_000,
    /** Counts lookups for the hit-ratio metric (a Metrics.cache counter of @pds/http). */
    private readonly stats?: { hit(): void; miss(): void },
  ) {
    this.entries = new LRUCache({ max: maxEntries });
  }

  get(scope: string, token: string, nowSeconds: number): TokenClaims | undefined {
    const key = keyOf(scope, token);
    const claims = this.entries.get(key);
    if (claims && claims.exp <= nowSeconds) {
      this.entries.delete(key);
      this.stats?.miss();
      return undefined;
    }
    if (claims) this.stats?.hit();
    else this.stats?.miss();
    return claims;
  }

  set(scope: string, token: string, claims: TokenClaims, nowSeconds: number): void {
    const ttlMs = (claims.exp - nowSeconds) * 1000;
    if (ttlMs > 0) this.entries.set(keyOf(scope, token), claims, { ttl: ttlMs });
  }
}

function keyOf(scope: string, token: string): string {
  // The one-shot hash: a Hash object per request cost 0.4 µs more.
  return `${scope} ${hash('sha256', token, 'base64url')}`;
}
