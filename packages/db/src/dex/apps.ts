// Certified app records (versioned per app id) and the log of their pushes to instances.
import type { DexDb } from '../clients';
import type { AppPush } from '../generated/dex/client';
import type { Prisma } from '../generated/dex/client';

export interface StoredVersion {
  version: number;
  pushes: Pick<AppPush, 'id' | 'address'>[];
}

export class AppRecordRepository {
  constructor(private readonly db: DexDb) {}

  /**
   * Stores the record as the app's next version and one queued push per target, in one transaction.
   * Two concurrent updates of one app collide on the (appId, version) key; the loser retries.
   */
  async createVersion(appId: string, record: Prisma.InputJsonValue, createdBy: string, targets: string[]): Promise<StoredVersion> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.db.$transaction(async (tx) => {
          const latest = await tx.appRecord.aggregate({ where: { appId }, _max: { version: true } });
          const version = (latest._max.version ?? 0) + 1;
          await tx.appRecord.create({ data: { appId, version, record, createdBy } });
          const pushes = await tx.appPush.createManyAndReturn({
            data: targets.map((address) => ({ appId, version, address })),
            select: { id: true, address: true },
          });
          return { version, pushes };
        });
      } catch (error) {
        if ((error as { code?: string }).code !== 'P2002' || attempt >= 4) throw error;
      }
    }
  }

  findPush(id: string): Promise<AppPush | null> {
    return this.db.appPush.findUnique({ where: { id } });
  }

  async recordAttempt(id: string): Promise<void> {
    await this.db.appPush.update({ where: { id }, data: { attempts: { increment: 1 }, state: 'sending' } });
  }

  async markDelivered(id: string, at: Date): Promise<void> {
    await this.db.appPush.update({ where: { id }, data: { state: 'delivered', deliveredAt: at, lastError: null } });
  }

  /** `final` when no retry follows. */
  async markError(id: string, message: string, final: boolean): Promise<void> {
    await this.db.appPush.update({ where: { id }, data: { state: final ? 'failed' : 'retrying', lastError: message.slice(0, 1000) } });
  }

  /** Pushes not yet delivered nor given up, with their records: what a restarted worker must (re)queue. */
  async undelivered(take = 1000): Promise<{ id: string; address: string; appId: string; version: number; record: Prisma.JsonValue }[]> {
    const pushes = await this.db.appPush.findMany({
      where: { state: { in: ['queued', 'sending', 'retrying'] } },
      orderBy: { createdAt: 'asc' },
      take,
    });
    const records = await this.db.appRecord.findMany({
      where: { OR: pushes.map((p) => ({ appId: p.appId, version: p.version })) },
    });
    const byKey = new Map(records.map((r) => [`${r.appId} ${r.version}`, r.record]));
    return pushes.flatMap((p) => {
      const record = byKey.get(`${p.appId} ${p.version}`);
      return record === undefined ? [] : [{ id: p.id, address: p.address, appId: p.appId, version: p.version, record }];
    });
  }
}
