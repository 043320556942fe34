// The account state that every authenticated request checks (the user behind a token: disabled,
// deleted; an app token's app: enabled, bound to that account), and the data grants every data call
// of an app or user checks, cached per instance. Any change to an instance's accounts, apps or grants
// is announced through `changed`, and every gateway drops that instance's entries (invalidation.ts),
// so a disabled account or a revoked grant is refused everywhere within moments.
import { performance } from 'node:perf_hooks';
import { LRUCache } from 'lru-cache';
import type { Account, AccountsChanged, Application, ApplicationRepository, DataGrant, DataGrantRepository, UserRepository } from '@pds/db';
import type { Invalidation, InvalidationListener, InvalidationMessage } from '../instances/invalidation';

/** What the app-token check needs of an app. */
export type AppState = Pick<Application, 'enabled' | 'userId'>;

interface Entry {
  value: Account | AppState | DataGrant[] | null;
  readAt: number;
}

/** Entries kept per instance; an instance with more active accounts starts over (a bound, not a policy). */
const MAX_ENTRIES_PER_INSTANCE = 1000;

export class AccountCache implements InvalidationListener {
  private readonly byInstance = new LRUCache<string, Map<string, Entry>>({ max: 100_000 });
  /** Bumped by every invalidation: a read that overlapped one may be stale and is not kept. */
  private generation = 0;

  constructor(
    private readonly users: UserRepository,
    private readonly apps: ApplicationRepository,
    private readonly grantRows: DataGrantRepository,
    private readonly invalidation: Invalidation,
    /** Counts lookups for the hit-ratio metric (see Metrics.cache of @pds/http). */
    private readonly options: { stats?: { hit(): void; miss(): void } } = {},
  ) {
    invalidation.listen(this);
  }

  /** Call after a change to an instance's accounts or apps is committed. */
  readonly changed: AccountsChanged = (instanceId) => this.invalidation.publish({ kind: 'accounts', instanceId });

  user(instanceId: string, userId: string): Promise<Account | null> {
    return this.cached(instanceId, `user ${userId}`, () => this.users.findAccount(instanceId, userId)) as Promise<Account | null>;
  }

  async app(instanceId: string, appId: string): Promise<AppState | null> {
    return this.cached(instanceId, `app ${appId}`, async () => {
      const app = await this.apps.find(instanceId, appId);
      return app && { enabled: app.enabled, userId: app.userId };
    }) as Promise<AppState | null>;
  }

  /** The account's data grants (DataAccessPolicy, EventVisibility). */
  grants(instanceId: string, userId: string): Promise<DataGrant[]> {
    return this.cached(instanceId, `grants ${userId}`, () => this.grantRows.grants(instanceId, userId)) as Promise<DataGrant[]>;
  }

  forget(message: InvalidationMessage): void {
    if (message.kind !== 'accounts') return;
    this.generation++;
    this.byInstance.delete(message.instanceId);
  }

  forgetAll(): void {
    this.generation++;
    this.byInstance.clear();
  }

  private async cached(instanceId: string, key: string, read: () => Promise<Entry['value']>): Promise<Entry['value']> {
    const hit = this.byInstance.get(instanceId)?.get(key);
    if (hit && performance.now() - hit.readAt < this.invalidation.maxAgeMs()) {
      this.options.stats?.hit();
      return hit.value;
    }
    this.options.stats?.miss();
    const generation = this.generation;
    const value = await read();
    if (generation === this.generation) {
      let entries = this.byInstance.get(instanceId);
      if (!entries || entries.size >= MAX_ENTRIES_PER_INSTANCE) this.byInstance.set(instanceId, (entries = new Map()));
      entries.set(key, { value, readAt: performance.now() });
    }
    return value;
  }
}
