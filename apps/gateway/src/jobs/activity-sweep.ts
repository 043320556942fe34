// activity-sweep: retention of the owner's activity log and the outbox. Entries older than
// ACTIVITY_RETENTION_DAYS are removed hourly (one repeatable job for the cluster, whichever worker takes
// it), in batches, so one sweep never holds a long transaction. Idempotent: a run cut short is finished
// by the next.
import type { EventRepository } from '@pds/db';

/** How often the sweep runs. */
export const ACTIVITY_SWEEP_EVERY_MS = 3600 * 1000;
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

export function activitySweepProcessor(events: EventRepository, retentionDays: number, clock: () => Date) {
  return async (): Promise<{ removed: number }> => ({ removed: await sweepActivity(events, retentionDays, clock()) });
}
