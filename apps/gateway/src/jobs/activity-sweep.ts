// Retention of the owner's activity log and the outbox: entries older than ACTIVITY_RETENTION_DAYS are
// removed hourly, in batches, so one sweep never holds a long transaction.
import type { EventRepository } from '@pds/db';
import type { Logger } from '@pds/runtime';

const EVERY_MS = 3600 * 1000;
const BATCH = 5000;

/** Removes what is older than the retention, instance by instance, batch after batch; the number removed (at least). */
export async function sweepActivity(events: EventRepository, retentionDays: number, now: Date): Promise<number> {
  const before = new Date(now.getTime() - retentionDays * 24 * 3600 * 1000);
  let total = 0;
  for (const instanceId of await events.instanceIds()) {
    for (;;) {
      const removed = await events.sweep(instanceId, before, BATCH);
      total += removed;
      if (removed < BATCH) break;
    }
  }
  return total;
}

/** Sweeps at start and hourly after; returns what stops it. */
export function sweepActivityEvery(events: EventRepository, retentionDays: number, logger: Logger): () => void {
  const run = () =>
    sweepActivity(events, retentionDays, new Date())
      .then((removed) => removed > 0 && logger.info({ removed }, 'activity sweep'))
      .catch((error: unknown) => logger.warn({ err: error }, 'activity sweep failed; the next hour tries again'));
  void run();
  const timer = setInterval(() => void run(), EVERY_MS);
  return () => clearInterval(timer);
}
