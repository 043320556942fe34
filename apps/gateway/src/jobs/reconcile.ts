// At gateway worker start and every RECONCILE_EVERY_MS: registrations that a crash or a Redis outage
// may have dropped (a sign-up during an outage could not queue its own) are queued again. The job is
// idempotent and keeps one id per address, so queueing one that is still queued costs nothing.
import type { GatewayDexStateRepository } from '@pds/db';
import type { Logger } from '@pds/runtime';
import { jobIds, type Producer } from '@pds/queue';

export async function requeuePendingRegistrations(
  states: GatewayDexStateRepository,
  registration: Producer<'dex-registration'>,
  logger: Logger,
): Promise<number> {
  const addresses = await states.pendingAddresses();
  for (const address of addresses) await registration.enqueue({ address }, jobIds.registration(address));
  if (addresses.length > 0) logger.info({ count: addresses.length }, 'requeued pending dex registrations');
  return addresses.length;
}
