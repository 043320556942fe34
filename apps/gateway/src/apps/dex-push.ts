// Dex → instance: a certified app record, authenticated by a dex service token for this instance.
import { z } from 'zod';
import { parseAppRecord } from '@pds/app-record';
import type { ApplicationRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import { APP_PUSH_SCOPE, type Clock, DEX_ISSUER, epochSeconds, verifyServiceToken } from '@pds/tokens';
import type { ResolvedInstance } from '../instances/registry';
import { tokenKeyId, type DexKeySource } from './dex-keys';

export const pushSchema = z.object({
  version: z.number().int().min(0).max(2_147_483_647),
  record: z.unknown(),
});

export class DexPushService {
  constructor(
    private readonly apps: ApplicationRepository,
    private readonly dexKeys: DexKeySource,
    private readonly clock: Clock,
  ) {}

  /** Whether the caller is dex: a dex-signed service token for pushes to this instance; 401 otherwise. */
  async verifyToken(tenant: ResolvedInstance, dexToken: string | undefined): Promise<void> {
    if (!dexToken) throw ApiError.notAuthenticated();
    const key = await this.dexKeys.key(tokenKeyId(dexToken));
    if (!key) throw ApiError.unavailable('The dex public key is unavailable; retry later');
    const expected = { issuer: DEX_ISSUER, audience: tenant.instance.address, scope: APP_PUSH_SCOPE };
    if (!verifyServiceToken(dexToken, key, expected, epochSeconds(this.clock))) throw ApiError.notAuthenticated();
  }

  /** Stores the pushed record unless a newer version is stored (the caller was verified as dex). */
  async receive(tenant: ResolvedInstance, input: { appId: string; push: z.output<typeof pushSchema> }) {
    const { version, record } = input.push;
    const parsed = parseAppRecord(record);
    if (!parsed.success) {
      throw ApiError.badRequest(parsed.error.issues.map((i) => `record.${i.path.join('.')}: ${i.message}`).join('; '));
    }
    if (parsed.record.id !== input.appId) throw ApiError.badRequest(`record.id: must equal the path's app id ${input.appId}`);

    const stored = await this.apps.storePushed(tenant.instance.id, input.appId, parsed.record, version, this.clock());
    const app = await this.apps.find(tenant.instance.id, input.appId);
    const setUp = Boolean(app?.setup && app.enabled);
    return { message: stored ? 'Stored' : 'Ignored: a newer version is stored', appId: input.appId, version, setUp };
  }
}
