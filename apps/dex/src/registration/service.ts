// registerHat: accept an address under a certified cluster, have the worker fetch its key, and answer
// with the outcome if it arrives within a few seconds.
import type { CertifiedClusterRepository, RegisteredInstanceRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import { jobIds, type Producer, type QueueEvents } from '@pds/queue';
import { parseInstanceAddress } from '../address';

/** What the key-fetch job returns (see ../jobs/key-fetch.ts). */
export type KeyFetchOutcome = 'registered' | 'key-mismatch';

export type RegistrationResult = { status: 200 | 202; body: { message: string; hatAddress: string } };

export class RegistrationService {
  constructor(
    private readonly clusters: CertifiedClusterRepository,
    private readonly instances: RegisteredInstanceRepository,
    private readonly keyFetch: Producer<'dex-key-fetch'>,
    private readonly keyFetchEvents: QueueEvents,
    private readonly waitMs: number,
  ) {}

  /** Anonymous by the spec: there is no caller (the route rate-limits by client instead). */
  async register(input: { hatAddress: unknown }): Promise<RegistrationResult> {
    const { address, cluster } = parseInstanceAddress(input.hatAddress);
    if (await this.clusters.isCertified(address))
      throw ApiError.badRequest(`hatAddress: ${address} is a cluster domain, not an instance address`);
    if (!(await this.clusters.isCertified(cluster)))
      throw ApiError.badRequest(`hatAddress: ${address} is not under a certified cluster domain`);

    const instance = await this.instances.ensure(address, cluster);
    if (instance.state === 'key_mismatch') throw keyMismatch(address);
    if (instance.state === 'retired')
      throw ApiError.conflict(`${address} was closed and retired by its cluster; an address is never registered again`);

    const job = await this.keyFetch.enqueue({ address }, jobIds.keyFetch(address));
    let outcome: KeyFetchOutcome;
    try {
      outcome = (await this.keyFetch.outcome(job, this.keyFetchEvents, this.waitMs)) as KeyFetchOutcome;
    } catch {
      // The wait ran out (the job still retries), the job gave up for good, or Redis failed.
      if (await job.isFailed()) {
        await this.instances.forgetUnkeyed(address);
        throw ApiError.badRequest(`hatAddress: ${address} did not serve an RSA public key`);
      }
      return { status: 202, body: { message: 'Registration pending', hatAddress: address } };
    }
    if (outcome === 'key-mismatch') throw keyMismatch(address);
    return { status: 200, body: { message: 'Registered', hatAddress: address } };
  }
}

function keyMismatch(address: string): ApiError {
  return ApiError.conflict(`The key of ${address} differs from the one registered; an administrator must re-certify it`);
}
