// Retiring an instance address (issue 19): the instance's cluster erased it, and its purge asks dex to
// forget its key and never register the address again (the spec: an address is not silently re-used).
// The call is signed with the instance's own key, the one dex stores for it: only whoever holds that
// key — the cluster, at the end of the grace period — can retire it. Idempotent: a retired address
// answers 200 again, whatever the token, since there is no key left to check it with.
import { createPublicKey } from 'node:crypto';
import type { RegisteredInstanceRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import { DEX_ISSUER, epochSeconds, readUnverified, RETIRE_SCOPE, verifyServiceToken, type Clock } from '@pds/tokens';

export type RetirementResult = { message: 'Retired'; hatAddress: string };

export class RetirementService {
  constructor(
    private readonly instances: RegisteredInstanceRepository,
    private readonly clock: Clock,
  ) {}

  async retire(token: string | undefined): Promise<RetirementResult> {
    const address = issuerOf(token);
    const instance = await this.instances.find(address);
    // Never keyed (its registration never finished): dex holds nothing of it to forget.
    if (!instance || (instance.state === 'pending' && !instance.fingerprint)) {
      if (instance) await this.instances.forgetUnkeyed(address);
      throw ApiError.notFound(`${address} is not registered at dex`);
    }
    if (instance.state === 'retired') return { message: 'Retired', hatAddress: address };
    // The key dex trusts; for a key-mismatch instance, also the one it parked (the cluster may hold either).
    const keys = [instance.publicKeyPem, instance.pendingKeyPem].filter((pem): pem is string => Boolean(pem));
    const now = epochSeconds(this.clock);
    const expected = { issuer: address, audience: DEX_ISSUER, scope: RETIRE_SCOPE };
    if (!keys.some((pem) => verifyServiceToken(token!, createPublicKey(pem), expected, now))) throw ApiError.notAuthenticated();
    await this.instances.retire(address, this.clock());
    return { message: 'Retired', hatAddress: address };
  }
}

/** The instance a token says it comes from, lower-case; 401 for no token or one that names none. */
function issuerOf(token: string | undefined): string {
  try {
    const iss = token ? readUnverified(token).claims.iss : undefined;
    if (typeof iss === 'string' && iss) return iss.toLowerCase();
  } catch {
    // Malformed: refused below.
  }
  throw ApiError.notAuthenticated();
}
