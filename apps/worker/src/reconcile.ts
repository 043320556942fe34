// At worker start: work that a crash or a Redis outage may have dropped is queued again. Both kinds
// of job are idempotent, so queueing something that was in fact done costs one harmless run.
import { parseAppRecord } from '@pds/app-record';
import type { AppRecordRepository, GatewayDexStateRepository } from '@pds/db';
import type { Logger } from '@pds/http';
import { jobIds, type Producer } from '@pds/queue';

export async function requeuePendingRegistrations(states: GatewayDexStateRepository, registration: Producer<'dex-registration'>, logger: Logger): Promise<number> {
  const addresses = await states.pendingAddresses();
  for (const address of addresses) await registration.enqueue({ address }, jobIds.registration(address));
  if (addresses.length > 0) logger.info({ count: addresses.length }, 'requeued pending dex registrations');
  return addresses.length;
}

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
