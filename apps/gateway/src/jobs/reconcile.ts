// At gateway worker start: registrations that a crash or a Redis outage may have dropped are queued
// again. The job is idempotent, so queueing one that was in fact done costs one harmless run.
import type { GatewayDexStateRepository } from '@pds/db';
import type { Logger } from '@pds/http';
import { jobIds, type Producer } from '@pds/queue';

export async function requeuePendingRegistrations(states: GatewayDexStateRepository, registration: Producer<'dex-registration'>, logger: Logger): Promise<number> {
  const addresses = await states.pendingAddresses();
  for (const address of addresses) await registration.enqueue({ address }, jobIds.registration(address));
  if (addresses.length > 0) logger.info({ count: addresses.length }, 'requeued pending dex registrations');
  return addresses.length;
}
