import type { GatewayDb } from './clients';
import type { Application, DataAccess, User } from './generated/gateway/client';
import { preparedRows, type Rows } from './sql';
import type { AccountsChanged } from './users';

const APPLICATION_COLUMNS = `"instanceId", "appId", "record", "version", "receivedAt", "setup", "enabled", "setupVersion", "userId"`;

export interface GrantSpec {
  namespace: string;
  /** "*" for every endpoint of the namespace. */
  endpoint: string;
  access: DataAccess;
}

/** Apps as dex pushed them, and their per-instance setup. Every method takes the instance id first. */
export class ApplicationRepository {
  private readonly rows: Rows;

  constructor(
    private readonly db: GatewayDb,
    private readonly changed: AccountsChanged = async () => undefined,
  ) {
    this.rows = preparedRows(db.pool);
  }

  /** Read for every request with an app token that no cache answers: a prepared statement. */
  async find(instanceId: string, appId: string): Promise<Application | null> {
    const [row] = await this.rows<Application>(
      `SELECT ${APPLICATION_COLUMNS} FROM "Application" WHERE "instanceId" = $1::uuid AND "appId" = $2`,
      [instanceId, appId],
    );
    return row ?? null;
  }

  list(instanceId: string): Promise<Application[]> {
    return this.db.application.findMany({ where: { instanceId }, orderBy: { appId: 'asc' } });
  }

  /**
   * Stores a pushed record unless a newer version is already stored (pushes may arrive out of order).
   * One statement, so two concurrent pushes cannot both win. True when the row was written.
   */
  async storePushed(instanceId: string, appId: string, record: unknown, version: number, receivedAt: Date): Promise<boolean> {
    const json = JSON.stringify(record);
    const written = await this.db.$executeRaw`
      INSERT INTO "Application" ("instanceId", "appId", "record", "version", "receivedAt")
      VALUES (${instanceId}::uuid, ${appId}, ${json}::jsonb, ${version}, ${receivedAt})
      ON CONFLICT ("instanceId", "appId") DO UPDATE
        SET "record" = EXCLUDED."record", "version" = EXCLUDED."version", "receivedAt" = EXCLUDED."receivedAt"
        WHERE "Application"."version" <= EXCLUDED."version"`;
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
  ): Promise<{ application: Application; user: User } | null> {
    const result = await this.db.$transaction(async (tx) => {
      // Row lock: concurrent setups of one app serialise instead of racing on the grants.
      const locked = await tx.$queryRaw<{ appId: string }[]>`
        SELECT "appId" FROM "Application" WHERE "instanceId" = ${instanceId}::uuid AND "appId" = ${appId} FOR UPDATE`;
      if (locked.length === 0) return null;
      const user = await tx.user.upsert({
        where: { instanceId_username: { instanceId, username: setup.username } },
        create: { instanceId, username: setup.username, kind: 'application' },
        update: { disabled: false },
      });
      await tx.dataGrant.deleteMany({ where: { instanceId, userId: user.id } });
      await tx.dataGrant.createMany({ data: setup.grants.map((g) => ({ instanceId, userId: user.id, ...g })), skipDuplicates: true });
      const application = await tx.application.update({
        where: { instanceId_appId: { instanceId, appId } },
        data: { setup: true, enabled: true, setupVersion: setup.version, userId: user.id },
      });
      return { application, user };
    });
    // The app's account may have been re-enabled and bound to the app.
    if (result) await this.changed(instanceId);
    return result;
  }

  /** Null when the app does not exist. */
  async setEnabled(instanceId: string, appId: string, enabled: boolean): Promise<Application | null> {
    const { count } = await this.db.application.updateMany({ where: { instanceId, appId }, data: { enabled } });
    if (count === 0) return null;
    await this.changed(instanceId);
    return this.find(instanceId, appId);
  }
}
