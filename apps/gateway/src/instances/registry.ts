// Maps an instance address to the instance and its public key and, for the instances that sign
// tokens, to their private key. Resolved instances stay in an LRU sized for every instance of a large
// cluster; private keys are opened only to sign (log-ins, refreshes), and only the most recent
// signers' are kept, so a gateway holds no private key of an instance nobody logs in to. Hot entries
// never expire by age: a change to an instance (created, key changed, deleted) is announced through
// `changed`, which every gateway hears (invalidation.ts).
import { performance } from 'node:perf_hooks';
import { LRUCache } from 'lru-cache';
import type { InstanceRepository, InstanceRow } from '@pds/db';
import { ApiError } from '@pds/http';
import { compactSigningKeys, compactVerifyingKey, openPrivateKey, type SigningKeys, type VerifyingKey } from '@pds/tokens';
import type { Invalidation, InvalidationListener, InvalidationMessage } from './invalidation';

/**
 * The instance as requests see it, its state included (the pipeline refuses calls to a suspended or
 * closing instance). Its sealed private key is left out (signingKeys opens it when a token is issued),
 * and so is its dex registration state, which the worker changes without telling gateways.
 */
export type TenantInstance = Omit<InstanceRow, 'privateKeyEnc' | 'dexState'>;

export interface ResolvedInstance {
  instance: TenantInstance;
  keys: VerifyingKey;
}

/** Instances whose opened private key is kept: those that signed a token most recently. */
const RECENT_SIGNERS = 1_000;

interface Entry {
  resolved: ResolvedInstance;
  /** performance.now() when read from the database. */
  readAt: number;
}

export class InstanceRegistry implements InvalidationListener {
  private readonly cache: LRUCache<string, Entry>;
  /** By address: the signing keys of the instances that issued a token most recently. */
  private readonly signers = new LRUCache<string, SigningKeys>({ max: RECENT_SIGNERS });
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
    const { privateKeyEnc: _openedToSign, dexState: _changedByTheWorker, ...kept } = instance;
    // Nothing is parsed here (see compactVerifyingKey).
    const resolved = { instance: kept, keys: compactVerifyingKey(kept.keyId, kept.publicKeyPem) };
    if (generation === this.generation) this.cache.set(address, { resolved, readAt: performance.now() });
    return resolved;
  }

  /**
   * The keys to sign this instance's tokens with: its private key is read and opened on the first
   * signature (a round trip on the log-in or refresh that needs it) and kept for the recent signers.
   */
  async signingKeys(resolved: ResolvedInstance): Promise<SigningKeys> {
    const { address, keyId } = resolved.instance;
    const kept = this.signers.get(address);
    if (kept && kept.keyId === keyId) return kept;
    const generation = this.generation;
    const instance = await this.instances.findByAddress(address);
    // Deleted while its request ran: the same answer as for a host that names no instance.
    if (!instance) throw ApiError.notFound(`There is no instance at ${address}`);
    // A key changed while the request ran signs with the key the instance has now.
    const verifying = instance.keyId === keyId ? resolved.keys : compactVerifyingKey(instance.keyId, instance.publicKeyPem);
    const keys = compactSigningKeys(verifying, openPrivateKey(instance.privateKeyEnc, this.masterKey));
    if (generation === this.generation) this.signers.set(address, keys);
    return keys;
  }

  /** Call after changing an instance (created, key or state changed, deleted): every gateway forgets it. */
  changed(address: string): Promise<void> {
    return this.invalidation.publish({ kind: 'instance', address });
  }

  forget(message: InvalidationMessage): void {
    if (message.kind !== 'instance') return;
    this.generation++;
    this.cache.delete(message.address);
    this.signers.delete(message.address);
  }

  forgetAll(): void {
    this.generation++;
    this.cache.clear();
    this.signers.clear();
  }
}
