// dex-registration: asks dex to register a new instance, then records the outcome in the gateway DB.
// Dex's registerHat is idempotent, so running this twice is harmless.
import { UnrecoverableError, type Job } from 'bullmq';
import type { GatewayDexStateRepository } from '@pds/db';
import { httpRequest } from '@pds/runtime';
import { isLastAttempt, type JobPayloads } from '@pds/queue';

type Payload = JobPayloads['dex-registration'];

export function dexRegistrationProcessor(deps: { dexUrl: string; states: GatewayDexStateRepository }) {
  return async (job: Job<Payload>): Promise<'registered' | 'failed'> => {
    const { address } = job.data;
    try {
      const res = await httpRequest(new URL(`${deps.dexUrl}/api/users/registerHat`), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ hatAddress: address }),
        // Dex itself waits a few seconds for the key fetch before answering.
        timeoutMs: 15_000,
        maxBytes: 16 * 1024,
      });
      if (res.status === 200) {
        await deps.states.set(address, 'registered');
        return 'registered';
      }
      // 202: dex is still fetching the key; asking again later is how we learn the outcome.
      if (res.status === 202) throw new Error('registration still pending at dex');
      // 400/409 will not change by asking again: refused address, key mismatch, no key served.
      // 429 (dex's per-client limit) will: the retry backoff waits it out.
      if (res.status >= 400 && res.status < 500 && res.status !== 429)
        throw new UnrecoverableError(`dex refused the registration: ${res.status} ${res.body.slice(0, 300)}`);
      throw new Error(`dex answered ${res.status}`);
    } catch (error) {
      if (error instanceof UnrecoverableError || isLastAttempt(job)) await deps.states.set(address, 'failed');
      throw error;
    }
  };
}
