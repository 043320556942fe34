// Maps an instance address to the instance and its parsed signing keys. Decrypting and parsing a key
// costs more than the request it serves, so resolved instances are kept in an LRU with a TTL.
import { LRUCache } from 'lru-cache';
import type { Instance, InstanceRepository } from '@pds/db';
import { openPrivateKey, signingKeys, type SigningKeys } from '@pds/tokens';

export interface ResolvedInstance {
  instance: Instance;
  keys: SigningKeys;
}

export class InstanceRegistry {
  private readonly cache: LRUCache<string, ResolvedInstance>;
  /** Counts lookups for the hit-ratio metric (see Metrics.cache of @pds/http). */
  private readonly stats?: { hit(): void; miss(): void };

  constructor(
    private readonly instances: InstanceRepository,
    private readonly masterKey: Buffer,
    options: { max?: number; ttlMs?: number; stats?: { hit(): void; miss(): void } } = {},
  ) {
    this.cache = new LRUCache({ max: options.max ?? 10_000, ttl: options.ttlMs ?? 60_000 });
    this.stats = options.stats;
  }

  /** The instance at this address, or null. Unknown addresses are not cached: sign-up may create them. */
  async resolve(address: string): Promise<ResolvedInstance | null> {
    const cached = this.cache.get(address);
    if (cached) {
      this.stats?.hit();
      return cached;
    }
    this.stats?.miss();
    const instance = await this.instances.findByAddress(address);
    if (!instance) return null;
    const resolved = { instance, keys: signingKeys(instance.keyId, openPrivateKey(instance.privateKeyEnc, this.masterKey)) };
    this.cache.set(address, resolved);
    return resolved;
  }

  invalidate(address: string): void {
    this.cache.delete(address);
  }
}
