// The gateway side of dex registration, as the worker sees it: which instances still wait, and the outcome.
import type { GatewayDb } from '../clients';
import type { DexState } from '../generated/gateway/client';

export class GatewayDexStateRepository {
  constructor(private readonly db: GatewayDb) {}

  async pendingAddresses(take = 1000): Promise<string[]> {
    const rows = await this.db.instance.findMany({
      where: { dexState: 'pending' },
      select: { address: true },
      orderBy: { createdAt: 'asc' },
      take,
    });
    return rows.map((r) => r.address);
  }

  /** False when the gateway has no such instance. */
  async set(address: string, dexState: DexState): Promise<boolean> {
    const { count } = await this.db.instance.updateMany({ where: { address }, data: { dexState } });
    return count > 0;
  }
}
