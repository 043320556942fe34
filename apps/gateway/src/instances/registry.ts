// Maps an instance address to the instance and its parsed signing keys. Decrypting and parsing a key
// costs more than the request it serves, so resolved instances stay in an LRU sized for every
// instance of a large cluster. Hot entries never expire by age: a change to an instance (created,
// key changed, deleted) is announced through `changed`, which every gateway hears (invalidation.ts).
import { performance } from 'node:perf_hooks';
import { LRUCache } from 'lru-cache';
import type { Instance, InstanceRepository } from '@pds/db';
import { compactSigningKeys, openPrivateKey, type SigningKeys } from '@pds/tokens';
import type { Invalidation, InvalidationListener, InvalidationMessage } from './invalidation';

/**
 * The instance as requests see it. Its sealed private key is opened once, into `keys`, and not kept;
 * its dex registration state is left out because the worker changes it without telling gateways.
 */
export type TenantInstance = Omit<Instance, 'privateKeyEnc' | 'dexState'>;

export interface ResolvedInstance {
  instance: TenantInstance;
  keys: SigningKeys;
}

interface Entry {
  resolved: ResolvedInstance;
  /** performance.now() when read from the database. */
  readAt: number;
}

export class InstanceRegistry implements InvalidationListener {
  private readonly cache: LRUCache<string, Entry>;
  /** Bumped by every invalidation: a read that overlapped one may be stale and is not kept. */
  private generation = 0;
  /** Counts lookups for the hit-ratio metric (see Metrics.cache of @pds/http). */
  private readonly stats?: { hit(): void; miss(): void };

  constructor(
    private readonly instances: InstanceRepository,
    private readonly masterKey: Buffer,
    private readonly invalidation: Invalidation,
    options: { max?: number; stats?: { hit(): void; miss(): void } } = {},
  ) {
    this.cache = new LRUCache({ max: options.max ?? 100_000 });
    this.stats = options.stats;
    invalidation.listen(this);
  }

  /** The instance at this address, or null. Unknown addresses are not cached: sign-up may create them. */
  async resolve(address: string): Promise<ResolvedInstance | null> {
    const cached = this.cache.get(address);
    if (cached && performance.now() - cached.readAt < this.invalidation.maxAgeMs()) {
      this.stats?.hit();
      return cached.resolved;
    }
    this.stats?.miss();
    const generation = this.generation;
    const instance = await this.instances.findByAddress(address);
    if (!instance) return null;
    const { privateKeyEnc, dexState: _changedByTheWorker, ...kept } = instance;
    // Nothing is parsed here (see compactSigningKeys): opening the sealed key is all a resolution costs.
    const resolved = {
      instance: kept,
      keys: compactSigningKeys(kept.keyId, openPrivateKey(privateKeyEnc, this.masterKey), kept.publicKeyPem),
    };
    if (generation === this.generation) this.cache.set(address, { resolved, readAt: performance.now() });
    return resolved;
  }

  /** Call after changing an instance (created, key changed, deleted): every gateway forgets it. */
  changed(address: string): Promise<void> {
    return this.invalidation.publish({ kind: 'instance', address });
  }

  forget(message: InvalidationMessage): void {
    if (message.kind !== 'instance') return;
    this.generation++;
    this.cache.delete(message.address);
  }

  forgetAll(): void {
    this.generation++;
    this.cache.clear();
  }
}
