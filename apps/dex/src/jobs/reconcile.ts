// At dex worker start and every RECONCILE_EVERY_MS: app pushes that a crash or a Redis outage may have
// dropped are queued again. The job is idempotent and keeps one id per push, so queueing one that is
// still queued or was in fact delivered costs nothing or one harmless run.
import { parseAppRecord } from '@pds/app-record';
import type { AppRecordRepository, RegisteredInstanceRepository } from '@pds/db';
import type { Logger } from '@pds/runtime';
import { jobIds, type Producer } from '@pds/queue';

export async function requeueUndeliveredPushes(apps: AppRecordRepository, appPush: Producer<'app-push'>, logger: Logger): Promise<number> {
  const pushes = await apps.undelivered();
  let count = 0;
  for (const push of pushes) {
    const parsed = parseAppRecord(push.record);
    if (!parsed.success) {
      logger.error({ pushId: push.id }, 'stored app record no longer validates; push not requeued');
      continue;
    }
    await appPush.enqueue(
      { pushId: push.id, address: push.address, record: parsed.record, version: push.version },
      jobIds.appPush(push.id),
    );
    count++;
  }
  if (count > 0) logger.info({ count }, 'requeued undelivered app pushes');
  return count;
}

/**
 * How long dex keeps an address whose key was never fetched. registerHat already drops one whose
 * fetch failed for good; this removes what a crash or an abandoned retry left behind.
 */
export const UNKEYED_REGISTRATION_TTL_MS = 3600 * 1000;

/** One reconciliation pass of the dex worker: owed pushes queued again, key-less registrations expired. */
export async function reconcileDex(
  deps: { apps: AppRecordRepository; appPush: Producer<'app-push'>; instances: RegisteredInstanceRepository; clock: () => Date },
  logger: Logger,
): Promise<void> {
  await requeueUndeliveredPushes(deps.apps, deps.appPush, logger);
  const forgotten = await deps.instances.forgetUnkeyedBefore(new Date(deps.clock().getTime() - UNKEYED_REGISTRATION_TTL_MS));
  if (forgotten > 0) logger.info({ count: forgotten }, 'removed registrations that never got a key');
}
