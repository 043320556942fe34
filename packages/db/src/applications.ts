import { randomUUID } from 'node:crypto';
import type { GatewayDb } from './clients';
import type { Application, DataAccess } from './generated/gateway/client';
import { commitWithEvents, type Actor } from './outbox';
import { sqlOn, transaction, type Sql } from './sql';
import { USER_COLUMNS, type AccountsChanged, type User } from './users';

const APPLICATION_COLUMNS = `"instanceId", "appId", "record", "version", "receivedAt", "setup", "enabled", "setupVersion", "userId"`;

export interface GrantSpec {
  namespace: string;
  /** "*" for every endpoint of the namespace. */
  endpoint: string;
  access: DataAccess;
}

/** Apps as dex pushed them, and their per-instance setup. Every method takes the instance id first. */
export class ApplicationRepository {
  private readonly sql: Sql;

  constructor(
    private readonly db: GatewayDb,
    private readonly changed: AccountsChanged = async () => undefined,
  ) {
    this.sql = sqlOn(db.pool);
  }

  /** Read for every request with an app token that no cache answers: a prepared statement. */
  async find(instanceId: string, appId: string): Promise<Application | null> {
    const [row] = await this.sql.prepared<Application>(
      `SELECT ${APPLICATION_COLUMNS} FROM "Application" WHERE "instanceId" = $1::uuid AND "appId" = $2`,
      [instanceId, appId],
    );
    return row ?? null;
  }

  list(instanceId: string): Promise<Application[]> {
    return this.sql.prepared<Application>(
      `SELECT ${APPLICATION_COLUMNS} FROM "Application" WHERE "instanceId" = $1::uuid ORDER BY "appId"`,
      [instanceId],
    );
  }

  /**
   * Stores a pushed record unless a newer version is already stored (pushes may arrive out of order).
   * One statement, so two concurrent pushes cannot both win. True when the row was written.
   */
  async storePushed(instanceId: string, appId: string, record: unknown, version: number, receivedAt: Date): Promise<boolean> {
    const written = await this.sql.count(
      `INSERT INTO "Application" ("instanceId", "appId", "record", "version", "receivedAt")
      VALUES ($1::uuid, $2, $3::jsonb, $4, $5::timestamptz)
      ON CONFLICT ("instanceId", "appId") DO UPDATE
        SET "record" = EXCLUDED."record", "version" = EXCLUDED."version", "receivedAt" = EXCLUDED."receivedAt"
        WHERE "Application"."version" <= EXCLUDED."version"`,
      [instanceId, appId, JSON.stringify(record), version, receivedAt],
    );
    return written > 0;
  }

  /**
   * Sets an app up in one transaction: its account (found or created by username), its grants
   * (replacing any earlier set), and the setup state. Null when the app does not exist.
   */
  async setUp(
    instanceId: string,
    appId: string,
    setup: { username: string; version: number; grants: GrantSpec[] },
    actor: Actor,
  ): Promise<{ application: Application; user: User } | null> {
    const result = await transaction(this.db.pool, async (tx) => {
      // Row lock: concurrent setups of one app serialise instead of racing on the grants.
      const locked = await tx.prepared(`SELECT 1 FROM "Application" WHERE "instanceId" = $1::uuid AND "appId" = $2 FOR UPDATE`, [
        instanceId,
        appId,
      ]);
      if (locked.length === 0) return null;
      const [user] = await tx.prepared<User>(
        `INSERT INTO "User" ("instanceId", "id", "username", "kind", "createdAt") VALUES ($1::uuid, $2::uuid, $3, 'application', $4::timestamptz)
        ON CONFLICT ("instanceId", "username") DO UPDATE SET "disabled" = false
        RETURNING ${USER_COLUMNS}`,
        [instanceId, randomUUID(), setup.username, new Date()],
      );
      await replaceGrants(tx, instanceId, user!.id, setup.grants);
      const [application] = await tx.prepared<Application>(
        `UPDATE "Application" SET "setup" = true, "enabled" = true, "setupVersion" = $3, "userId" = $4::uuid
        WHERE "instanceId" = $1::uuid AND "appId" = $2 RETURNING ${APPLICATION_COLUMNS}`,
        [instanceId, appId, setup.version, user!.id],
      );
      await commitWithEvents(tx, instanceId, [{ type: 'app.setup', object: { appId } }], actor);
      return { application: application!, user: user! };
    });
    // The app's account may have been re-enabled and bound to the app.
    if (result) await this.changed(instanceId);
    return result;
  }

  /** Null when the app does not exist. */
  async setEnabled(instanceId: string, appId: string, enabled: boolean, actor: Actor): Promise<Application | null> {
    const row = await transaction(this.db.pool, async (tx) => {
      const [changed] = await tx.prepared<Application>(
        `UPDATE "Application" SET "enabled" = $3 WHERE "instanceId" = $1::uuid AND "appId" = $2 RETURNING ${APPLICATION_COLUMNS}`,
        [instanceId, appId, enabled],
      );
      if (changed) await commitWithEvents(tx, instanceId, [{ type: enabled ? 'app.enabled' : 'app.disabled', object: { appId } }], actor);
      return changed;
    });
    if (!row) return null;
    await this.changed(instanceId);
    return row;
  }
}

/** The account's grants become exactly these (duplicates given once). */
async function replaceGrants(tx: Sql, instanceId: string, userId: string, grants: GrantSpec[]): Promise<void> {
  await tx.count(`DELETE FROM "DataGrant" WHERE "instanceId" = $1::uuid AND "userId" = $2::uuid`, [instanceId, userId]);
  if (grants.length === 0) return;
  await tx.count(
    `INSERT INTO "DataGrant" ("instanceId", "userId", "namespace", "endpoint", "access")
    SELECT $1::uuid, $2::uuid, g."namespace", g."endpoint", g."access"
    FROM unnest($3::text[], $4::text[], $5::"DataAccess"[]) AS g("namespace", "endpoint", "access")
    ON CONFLICT DO NOTHING`,
    [instanceId, userId, grants.map((g) => g.namespace), grants.map((g) => g.endpoint), grants.map((g) => g.access)],
  );
}
