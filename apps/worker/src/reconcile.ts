// At worker start and every RECONCILE_EVERY_MS: work that a crash or a Redis outage may have dropped
// is queued again. Both kinds of job are idempotent and keep one id per subject, so queueing something
// that is still queued or was in fact done costs nothing or one harmless run.
import { parseAppRecord } from '@pds/app-record';
import type { AppRecordRepository, GatewayDexStateRepository, RegisteredInstanceRepository } from '@pds/db';
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

export const RECONCILE_EVERY_MS = 10_000;

/**
 * How long dex keeps an address whose key was never fetched. registerHat already drops one whose
 * fetch failed for good; this removes what a crash or an abandoned retry left behind.
 */
export const UNKEYED_REGISTRATION_TTL_MS = 3600 * 1000;

export async function reconcile(
  deps: {
    states: GatewayDexStateRepository;
    registration: Producer<'dex-registration'>;
    apps: AppRecordRepository;
    appPush: Producer<'app-push'>;
    instances: RegisteredInstanceRepository;
    clock: () => Date;
  },
  logger: Logger,
): Promise<void> {
  await requeuePendingRegistrations(deps.states, deps.registration, logger);
  await requeueUndeliveredPushes(deps.apps, deps.appPush, logger);
  const forgotten = await deps.instances.forgetUnkeyedBefore(new Date(deps.clock().getTime() - UNKEYED_REGISTRATION_TTL_MS));
  if (forgotten > 0) logger.info({ count: forgotten }, 'removed registrations that never got a key');
}
