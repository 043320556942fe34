// Certified app records (versioned per app id) and the log of their pushes to instances.
import { randomUUID } from 'node:crypto';
import type { DexDb } from '../clients';
import type { AppPush, Prisma } from '../generated/dex/client';
import { isUuid, postgresErrorCode, sqlOn, transaction, UNIQUE_VIOLATION, type Sql } from '../sql';

export interface StoredVersion {
  version: number;
  pushes: Pick<AppPush, 'id' | 'address'>[];
}

const PUSH_COLUMNS = `"id", "appId", "version", "address", "state", "attempts", "lastError", "createdAt", "deliveredAt", "setUp", "pushedBy", "retries"`;

export interface AppVersion {
  appId: string;
  version: number;
  record: Prisma.JsonValue;
  createdBy: string;
  createdAt: Date;
}

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
            `INSERT INTO "AppPush" ("id", "appId", "version", "address", "createdAt", "pushedBy")
            SELECT t."id", $1, $2, t."address", $5::timestamptz, $6 FROM unnest($3::uuid[], $4::text[]) AS t("id", "address")
            RETURNING "id", "address"`,
            [appId, version, targets.map(() => randomUUID()), targets, now, createdBy],
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

  /** `setUp`: whether the instance had the app set up, as its answer said (null when it did not say). */
  async markDelivered(id: string, at: Date, setUp: boolean | null = null): Promise<void> {
    await this.sql.count(
      `UPDATE "AppPush" SET "state" = 'delivered', "deliveredAt" = $2::timestamptz, "lastError" = NULL, "setUp" = $3 WHERE "id" = $1::uuid`,
      [id, at, setUp],
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

  /** Each app's latest version, by app id. */
  latest(): Promise<AppVersion[]> {
    return this.sql.prepared<AppVersion>(
      `SELECT DISTINCT ON ("appId") "appId", "version", "record", "createdBy", "createdAt" FROM "AppRecord" ORDER BY "appId", "version" DESC`,
      [],
    );
  }

  /** An app's versions, newest first. */
  versions(appId: string): Promise<AppVersion[]> {
    return this.sql.prepared<AppVersion>(
      `SELECT "appId", "version", "record", "createdBy", "createdAt" FROM "AppRecord" WHERE "appId" = $1 ORDER BY "version" DESC`,
      [appId],
    );
  }

  /** The pushes of one version, by address. */
  pushes(appId: string, version: number): Promise<AppPush[]> {
    return this.sql.prepared<AppPush>(`SELECT ${PUSH_COLUMNS} FROM "AppPush" WHERE "appId" = $1 AND "version" = $2 ORDER BY "address"`, [
      appId,
      version,
    ]);
  }

  /** The instances whose latest delivered push of the app said its owner has it set up. */
  async setUpAt(appId: string): Promise<string[]> {
    const rows = await this.sql.prepared<{ address: string; setUp: boolean | null }>(
      `SELECT DISTINCT ON ("address") "address", "setUp" FROM "AppPush" WHERE "appId" = $1 AND "state" = 'delivered'
       ORDER BY "address", "version" DESC`,
      [appId],
    );
    return rows.filter((row) => row.setUp === true).map((row) => row.address);
  }

  /** A push an administrator asked for again: queued and counted, its last error kept until the next attempt says otherwise. */
  async requeue(id: string): Promise<void> {
    await this.sql.count(
      `UPDATE "AppPush" SET "state" = 'queued', "retries" = "retries" + 1 WHERE "id" = $1::uuid AND "state" <> 'delivered'`,
      [id],
    );
  }

  /** Pushes by state (queued, sending, retrying, delivered, failed), for dex's metrics. */
  async countByState(): Promise<Record<string, number>> {
    const rows = await this.sql.prepared<{ state: string; n: string }>(
      `SELECT "state", count(*)::text AS "n" FROM "AppPush" GROUP BY "state"`,
      [],
    );
    const totals: Record<string, number> = { queued: 0, sending: 0, retrying: 0, delivered: 0, failed: 0 };
    for (const { state, n } of rows) totals[state] = Number(n);
    return totals;
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
