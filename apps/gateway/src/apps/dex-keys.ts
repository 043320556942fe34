// Dex's public key, which verifies the service tokens of app pushes.
import { createPublicKey, type KeyObject } from 'node:crypto';
import type { Logger } from '@pds/runtime';
import { type Clock, keyFingerprint } from '@pds/tokens';

export interface DexKeySource {
  /**
   * Dex's current public key, or null when it cannot be had. `kid` is the key id of the token in hand:
   * an unknown one tells the source that dex may have rotated its key.
   */
  key(kid: string | undefined): Promise<KeyObject | null>;
}

/** A fixed key (tests, or an operator who pins dex's key). */
export function staticDexKey(key: KeyObject): DexKeySource {
  return { key: async () => key };
}

/** Refetches are rate-limited so that tokens with made-up key ids cannot make us hammer dex. */
export const DEX_KEY_REFETCH_MS = 60_000;
const FETCH_TIMEOUT_MS = 5_000;
const MAX_PEM_CHARS = 16_384;

/** Fetches `${dexUrl}/publickey` (PEM) on first use and keeps it; refetches for an unknown kid, at most once a minute. */
export class HttpDexKeySource implements DexKeySource {
  private current?: { key: KeyObject; kid: string };
  private lastFetchAt?: number;
  private inflight?: Promise<{ key: KeyObject; kid: string }>;

  constructor(
    private readonly dexUrl: string,
    private readonly clock: Clock,
    private readonly logger?: Logger,
  ) {}

  async key(kid: string | undefined): Promise<KeyObject | null> {
    const now = this.clock().getTime();
    const stale = !this.current || (kid !== undefined && kid !== this.current.kid);
    const mayFetch = this.lastFetchAt === undefined || now - this.lastFetchAt >= DEX_KEY_REFETCH_MS;
    if (stale && (mayFetch || this.inflight)) {
      if (!this.inflight) {
        this.lastFetchAt = now;
        this.inflight = this.fetchKey().finally(() => (this.inflight = undefined));
      }
      try {
        this.current = await this.inflight;
      } catch (error) {
        // Keep the key we had: a dex outage must not undo verification that worked.
        this.logger?.warn({ err: error, dexUrl: this.dexUrl }, 'fetching the dex public key failed');
      }
    }
    return this.current?.key ?? null;
  }

  private async fetchKey(): Promise<{ key: KeyObject; kid: string }> {
    const res = await fetch(`${this.dexUrl}/publickey`, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    if (!res.ok) throw new Error(`dex answered ${res.status} for /publickey`);
    const pem = await res.text();
    if (pem.length > MAX_PEM_CHARS) throw new Error('dex /publickey is not a PEM public key');
    const key = createPublicKey(pem);
    return { key, kid: keyFingerprint(key) };
  }
}

/** The `kid` of a JWT's header, without verifying anything (it only picks the key). */
export function tokenKeyId(token: string): string | undefined {
  try {
    const header = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')) as { kid?: unknown };
    return typeof header.kid === 'string' ? header.kid : undefined;
  } catch {
    return undefined;
  }
}
