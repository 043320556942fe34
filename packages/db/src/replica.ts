// Which pool a read that tolerates lag (search, listings, bundles) goes to: the streaming replica of
// DATABASE_REPLICA_URL, unless its instance wrote within the last few seconds, so that a caller's own
// reads right after its write still see it. Every other statement goes to the primary.
import type pg from 'pg';
import type { GatewayDb } from './clients';
import { transaction, type TransactionStatements } from './sql';

/**
 * Which instances wrote recently. `wrote` is awaited before a write is answered, so a read the caller
 * sends after that answer finds the mark (on any gateway, when the marks are shared).
 */
export interface RecentWrites {
  wrote(instanceId: string): Promise<void>;
  recent(instanceId: string): Promise<boolean>;
}

/** Marks kept in this process for `windowMs`: enough for one gateway, the shared store's fast path for many. */
export class LocalRecentWrites implements RecentWrites {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  wrote(instanceId: string): Promise<void> {
    // Re-inserted so the map stays in expiry order and the sweep below stops at the first live mark.
    this.until.delete(instanceId);
    this.until.set(instanceId, this.now() + this.windowMs);
    this.sweep();
    return Promise.resolve();
  }

  recent(instanceId: string): Promise<boolean> {
    return Promise.resolve((this.until.get(instanceId) ?? 0) > this.now());
  }

  /** Drops expired marks, so the map holds only the instances that wrote within the window. */
  private sweep(): void {
    const now = this.now();
    for (const [id, until] of this.until) {
      if (until > now) break;
      this.until.delete(id);
    }
  }
}

export class ReadRouting {
  /**
   * Without a replica (or without marks to keep read-your-writes) every read goes to the primary.
   * `db.replica` is the pool createGatewayDb opened for DATABASE_REPLICA_URL.
   */
  constructor(
    private readonly db: GatewayDb,
    private readonly marks?: RecentWrites,
  ) {}

  /** Whether lag-tolerant reads may go to a replica at all. */
  get replicated(): boolean {
    return this.db.replica !== undefined && this.marks !== undefined;
  }

  /** The pool for a read of this instance's data that may be a moment old, but never older than its own writes. */
  async pool(instanceId: string): Promise<pg.Pool> {
    const replica = this.db.replica;
    if (!replica || !this.marks) return this.db.pool;
    return (await this.marks.recent(instanceId)) ? this.db.pool : replica;
  }

  /** Awaits a write of this instance, then marks it, so the write's answer goes out after its mark. */
  async written<T>(instanceId: string, write: Promise<T>): Promise<T> {
    const result = await write;
    if (this.db.replica && this.marks) await this.marks.wrote(instanceId);
    return result;
  }

  /** A write transaction of this instance, marked once committed. */
  transaction<T>(instanceId: string, work: (tx: TransactionStatements) => Promise<T>): Promise<T> {
    return this.written(instanceId, transaction(this.db.pool, work));
  }
}
