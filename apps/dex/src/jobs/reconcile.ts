// At dex worker start: app pushes that a crash or a Redis outage may have dropped are queued again.
// The job is idempotent, so queueing one that was in fact delivered costs one harmless run.
import { parseAppRecord } from '@pds/app-record';
import type { AppRecordRepository } from '@pds/db';
import type { Logger } from '@pds/http';
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
    await appPush.enqueue({ pushId: push.id, address: push.address, record: parsed.record, version: push.version }, jobIds.appPush(push.id));
    count++;
  }
  if (count > 0) logger.info({ count }, 'requeued undelivered app pushes');
  return count;
}
