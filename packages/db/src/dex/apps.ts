// Certified app records (versioned per app id) and the log of their pushes to instances.
import { randomUUID } from 'node:crypto';
import type { DexDb } from '../clients';
import type { AppPush, Prisma } from '../generated/dex/client';
import { isUuid, postgresErrorCode, sqlOn, transaction, UNIQUE_VIOLATION, type Sql } from '../sql';

export interface StoredVersion {
  version: number;
  pushes: Pick<AppPush, 'id' | 'address'>[];
}

const PUSH_COLUMNS = `"id", "appId", "version", "address", "state", "attempts", "lastError", "createdAt", "deliveredAt"`;

export class AppRecordRepository {
  private readonly sql: Sql;

  constructor(private readonly db: DexDb) {
    this.sql = sqlOn(db.pool);
  }

  /**
   * Stores the record as the app's next version and one queued push per target, in one transaction.
   * Two concurrent updates of one app collide on the (appId, version) key; the loser retries.
   */
  async createVersion(appId: string, record: Prisma.InputJsonValue, createdBy: string, targets: string[]): Promise<StoredVersion> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await transaction(this.db.pool, async (tx) => {
          const now = new Date();
          const [latest] = await tx.prepared<{ version: number | null }>(
            `SELECT max("version") AS "version" FROM "AppRecord" WHERE "appId" = $1`,
            [appId],
          );
          const version = (latest?.version ?? 0) + 1;
          await tx.count(
            `INSERT INTO "AppRecord" ("appId", "version", "record", "createdBy", "createdAt") VALUES ($1, $2, $3::jsonb, $4, $5::timestamptz)`,
            [appId, version, JSON.stringify(record), createdBy, now],
          );
          const pushes = await tx.prepared<Pick<AppPush, 'id' | 'address'>>(
            `INSERT INTO "AppPush" ("id", "appId", "version", "address", "createdAt")
            SELECT t."id", $1, $2, t."address", $5::timestamptz FROM unnest($3::uuid[], $4::text[]) AS t("id", "address")
            RETURNING "id", "address"`,
            [appId, version, targets.map(() => randomUUID()), targets, now],
          );
          return { version, pushes };
        });
      } catch (error) {
        if (postgresErrorCode(error) !== UNIQUE_VIOLATION || attempt >= 4) throw error;
      }
    }
  }

  async findPush(id: string): Promise<AppPush | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.sql.prepared<AppPush>(`SELECT ${PUSH_COLUMNS} FROM "AppPush" WHERE "id" = $1::uuid`, [id]);
    return row ?? null;
  }

  async recordAttempt(id: string): Promise<void> {
    await this.sql.count(`UPDATE "AppPush" SET "attempts" = "attempts" + 1, "state" = 'sending' WHERE "id" = $1::uuid`, [id]);
  }

  async markDelivered(id: string, at: Date): Promise<void> {
    await this.sql.count(
      `UPDATE "AppPush" SET "state" = 'delivered', "deliveredAt" = $2::timestamptz, "lastError" = NULL WHERE "id" = $1::uuid`,
      [id, at],
    );
  }

  /** `final` when no retry follows. */
  async markError(id: string, message: string, final: boolean): Promise<void> {
    await this.sql.count(`UPDATE "AppPush" SET "state" = $2, "lastError" = $3 WHERE "id" = $1::uuid`, [
      id,
      final ? 'failed' : 'retrying',
      message.slice(0, 1000),
    ]);
  }

  /** Pushes not yet delivered nor given up, with their records: what a restarted worker must (re)queue. */
  undelivered(take = 1000): Promise<{ id: string; address: string; appId: string; version: number; record: Prisma.JsonValue }[]> {
    return this.sql.prepared(
      `SELECT p."id", p."address", p."appId", p."version", r."record"
      FROM "AppPush" p JOIN "AppRecord" r ON r."appId" = p."appId" AND r."version" = p."version"
      WHERE p."state" IN ('queued', 'sending', 'retrying')
      ORDER BY p."createdAt", p."id" LIMIT $1`,
      [take],
    );
  }
}
