// instance-purge: erases the closing instances whose grace period has ended (issue 19, the owner's
// right to erasure). For each, in an order that lets a run killed at any point simply run again:
//   1. every object under its prefix on the blob store (files, thumbnails, archives);
//   2. its retirement at dex, signed with its own key (dex forgets the key, never re-registers the address);
//   3. every row carrying its id, table by table from the catalog, then the instance row itself (its
//      keys) with its address retired here — the row goes last, so until then the next sweep finds it.
// Every gateway then forgets the instance (it answers 404, and sign-up refuses the address).
import { httpRequest, type Logger } from '@pds/runtime';
import type { ClosedInstance, InstanceErasureRepository } from '@pds/db';
import { DEX_ISSUER, issueServiceToken, openPrivateKey, RETIRE_SCOPE, signingKeys, type Clock } from '@pds/tokens';
import type { InvalidationMessage } from '../instances/invalidation';

export interface InstancePurgeDeps {
  erasure: InstanceErasureRepository;
  /** The BlobStore (only `removePrefix` is needed). */
  store: { removePrefix(prefix: string): Promise<number> };
  dexUrl: string;
  masterKey: Buffer;
  clock: Clock;
  /** Tells every gateway (instances/invalidation.ts). */
  announce(message: InvalidationMessage): Promise<void>;
  logger: Logger;
  batchSize?: number;
}

/** The objects of an instance: every key starts with its address and a slash (objectKey, thumbnailKey). */
export const instancePrefix = (address: string) => `${address}/`;

export function instancePurgeProcessor(deps: InstancePurgeDeps) {
  const batchSize = deps.batchSize ?? 20;
  return async (): Promise<{ erased: string[] }> => {
    const erased: string[] = [];
    // Each erased instance leaves the query; one that fails ends the run with an error (retried by BullMQ).
    for (;;) {
      const batch = await deps.erasure.due(deps.clock(), batchSize);
      for (const instance of batch) {
        await purge(instance, deps);
        erased.push(instance.address);
      }
      if (batch.length < batchSize) return { erased };
    }
  };
}

async function purge(instance: ClosedInstance, deps: InstancePurgeDeps): Promise<void> {
  const { address } = instance;
  const objects = await deps.store.removePrefix(instancePrefix(address));
  const dex = await retireAtDex(instance, deps);
  const rows = await deps.erasure.erase(instance, deps.clock());
  await deps.announce({ kind: 'instance', address });
  await deps.announce({ kind: 'accounts', instanceId: instance.id });
  deps.logger.info({ address, objects, dex, rows }, 'closed instance erased');
}

/**
 * Asks dex to retire the address. Dex's 200 (now or before) and 404 (it never held a key for it) both
 * leave nothing at dex; a network failure or a 5xx is retried. Any other refusal will not change by
 * asking again and must not keep the owner's data: it is logged for the operator and the purge goes on.
 */
async function retireAtDex(instance: ClosedInstance, deps: InstancePurgeDeps): Promise<string> {
  const keys = signingKeys(instance.keyId, openPrivateKey(instance.privateKeyEnc, deps.masterKey));
  const now = Math.floor(deps.clock().getTime() / 1000);
  const token = issueServiceToken(keys, { issuer: instance.address, audience: DEX_ISSUER, scope: RETIRE_SCOPE }, now);
  const res = await httpRequest(new URL(`${deps.dexUrl}/api/v3/users/retireHat`), {
    method: 'POST',
    headers: { 'X-Auth-Token': token, Accept: 'application/json' },
    timeoutMs: 10_000,
    maxBytes: 16 * 1024,
  });
  if (res.status === 200) return 'retired';
  if (res.status === 404) return 'never registered';
  if (res.status >= 500 || res.status === 429) throw new Error(`dex answered ${res.status} to the retirement of ${instance.address}`);
  deps.logger.error(
    { address: instance.address, status: res.status, body: res.body.slice(0, 300) },
    'dex refused to retire an erased instance; retire it at dex by hand',
  );
  return `refused (${res.status})`;
}
