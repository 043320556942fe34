// dex-key-fetch: fetches an instance's public key and stores it at dex. Idempotent: the same key
// again changes nothing; a different key marks the instance key-mismatch (see RegisteredInstanceRepository).
import { createPublicKey } from 'node:crypto';
import { UnrecoverableError, type Job } from 'bullmq';
import type { KeyOutcome, RegisteredInstanceRepository } from '@pds/db';
import type { JobPayloads } from '@pds/queue';
import { keyFingerprint, publicKeyPem } from '@pds/tokens';
import { instanceRequest, ResponseTooLarge } from '@pds/runtime';

type Payload = JobPayloads['dex-key-fetch'];

const KEY_TIMEOUT_MS = 3000;
const KEY_MAX_BYTES = 16 * 1024;
const PEM = /^-----BEGIN (RSA )?PUBLIC KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END (RSA )?PUBLIC KEY-----$/;

/** The key as SPKI PEM when `text` is one RSA public key of at least 2048 bits, else null. */
export function parseRsaPublicKey(text: string): string | null {
  const trimmed = text.trim();
  if (!PEM.test(trimmed)) return null;
  try {
    const key = createPublicKey(trimmed);
    if (key.asymmetricKeyType !== 'rsa' || (key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) return null;
    return publicKeyPem(key);
  } catch {
    return null;
  }
}

export function keyFetchProcessor(deps: { gateways: Record<string, string>; instances: RegisteredInstanceRepository }) {
  return async (job: Job<Payload>): Promise<KeyOutcome> => {
    const { address } = job.data;
    // Only addresses that registerHat validated and stored are ever fetched.
    if (!(await deps.instances.find(address))) throw new UnrecoverableError(`${address} is not registered at dex`);
    let res;
    try {
      res = await instanceRequest(deps.gateways, address, '/publickey', {
        method: 'GET',
        headers: { Accept: 'text/plain' },
        timeoutMs: KEY_TIMEOUT_MS,
        maxBytes: KEY_MAX_BYTES,
      });
    } catch (error) {
      if (error instanceof ResponseTooLarge) throw new UnrecoverableError(`${address}/publickey: ${error.message}`);
      throw error;
    }
    // The gateway creates an instance before asking for its registration: 404 means there is none.
    if (res.status === 404) throw new UnrecoverableError(`${address} does not exist`);
    if (res.status !== 200) throw new Error(`${address}/publickey answered ${res.status}`);
    const pem = parseRsaPublicKey(res.body);
    if (!pem) throw new UnrecoverableError(`${address}/publickey is not an RSA public key`);
    const outcome = await deps.instances.recordKey(address, pem, keyFingerprint(pem));
    if (!outcome) throw new UnrecoverableError(`${address} is not registered at dex`);
    return outcome;
  };
}
