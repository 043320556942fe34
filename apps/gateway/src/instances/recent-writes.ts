// Read-your-writes across the gateways of a cluster when lag-tolerant reads go to a replica
// (DATABASE_REPLICA_URL, @pds/db ReadRouting): an instance's write is marked here and in Redis for the
// window, so its next search or listing reads the primary whichever gateway serves it.
import type { RedisClient } from '@pds/queue';
import { LocalRecentWrites, type RecentWrites } from '@pds/db';
import type { Logger } from '@pds/runtime';

export class SharedRecentWrites implements RecentWrites {
  private readonly local: LocalRecentWrites;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly windowMs: number,
    private readonly logger: Logger,
  ) {
    this.local = new LocalRecentWrites(windowMs);
  }

  async wrote(instanceId: string): Promise<void> {
    await this.local.wrote(instanceId);
    // While Redis is down the mark stays local: other gateways may then serve a moment-old search.
    if (this.redis.status !== 'ready') return;
    await this.redis.set(this.key(instanceId), '1', 'PX', this.windowMs).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'replica read-your-writes mark not shared');
    });
  }

  /** Marked here (no round trip), or by another gateway; unknown (Redis down) counts as recent: the primary is never wrong. */
  async recent(instanceId: string): Promise<boolean> {
    if (await this.local.recent(instanceId)) return true;
    if (this.redis.status !== 'ready') return true;
    return (await this.redis.exists(this.key(instanceId)).catch(() => 1)) === 1;
  }

  private key(instanceId: string): string {
    return `${this.prefix}:wrote:${instanceId}`;
  }
}
