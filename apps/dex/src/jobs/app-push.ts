// app-push: delivers one certified app record to one instance, signed with dex's key. Idempotent: a
// delivered push is not sent again, and the gateway ignores versions older than the one it holds.
import type { Job } from 'bullmq';
import type { AppRecordRepository } from '@pds/db';
import { errorMessage, isLastAttempt, type JobPayloads } from '@pds/queue';
import { APP_PUSH_SCOPE, DEX_ISSUER, epochSeconds, issueServiceToken, type SigningKeys } from '@pds/tokens';
import { instanceRequest } from '@pds/runtime';

type Payload = JobPayloads['app-push'];

export interface AppPushDeps {
  gateways: Record<string, string>;
  apps: AppRecordRepository;
  /** Dex's signing keys (loaded lazily: dex creates them on its first start). */
  keys: () => Promise<SigningKeys>;
  clock: () => Date;
}

export function appPushProcessor(deps: AppPushDeps) {
  return async (job: Job<Payload>): Promise<'delivered' | 'gone'> => {
    const { pushId, address, record, version } = job.data;
    const push = await deps.apps.findPush(pushId);
    if (!push) return 'gone';
    if (push.state === 'delivered') return 'delivered';
    await deps.apps.recordAttempt(pushId);
    let answer: string;
    try {
      const now = epochSeconds(deps.clock);
      const token = issueServiceToken(await deps.keys(), { issuer: DEX_ISSUER, audience: address, scope: APP_PUSH_SCOPE }, now);
      const res = await instanceRequest(deps.gateways, address, `/api/dex/applications/${encodeURIComponent(record.id)}`, {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-Auth-Token': token },
        body: JSON.stringify({ version, record }),
        timeoutMs: 10_000,
        maxBytes: 64 * 1024,
      });
      if (res.status < 200 || res.status >= 300) throw new Error(`PUT ${address}/api/dex/applications/${record.id} answered ${res.status}`);
      answer = res.body;
    } catch (error) {
      await deps.apps.markError(pushId, errorMessage(error), isLastAttempt(job));
      throw error;
    }
    await deps.apps.markDelivered(pushId, deps.clock(), setUpOf(answer));
    return 'delivered';
  };
}

/** Whether the instance's answer says its owner has the app set up; null when it does not say. */
function setUpOf(body: string): boolean | null {
  try {
    const setUp = (JSON.parse(body) as { setUp?: unknown }).setUp;
    return typeof setUp === 'boolean' ? setUp : null;
  } catch {
    return null;
  }
}
