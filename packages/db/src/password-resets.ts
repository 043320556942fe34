// Password-reset links: one per account at most (a new request replaces the old one), stored as the
// SHA-256 of the token, deleted by its use. Expiry is compared with the caller's clock (tests move it).
import type { GatewayDb } from './clients';
import { sqlOn, transaction, type Sql } from './sql';
import { endSessionsBefore, type AccountsChanged } from './users';

export class PasswordResetRepository {
  private readonly sql: Sql;

  constructor(
    private readonly db: GatewayDb,
    private readonly changed: AccountsChanged = async () => undefined,
  ) {
    this.sql = sqlOn(db.pool);
  }

  /** Makes `tokenHash` the account's only valid reset link until `expiresAt`. */
  async replace(instanceId: string, userId: string, tokenHash: string, expiresAt: Date): Promise<void> {
    await this.sql.count(
      `INSERT INTO "PasswordReset" ("instanceId", "userId", "tokenHash", "expiresAt") VALUES ($1::uuid, $2::uuid, $3, $4::timestamptz)
       ON CONFLICT ("instanceId", "userId") DO UPDATE SET "tokenHash" = EXCLUDED."tokenHash", "expiresAt" = EXCLUDED."expiresAt"`,
      [instanceId, userId, tokenHash, expiresAt],
    );
  }

  /** The account a link is for while it is valid at `now`, else null (nothing is used up). */
  async find(instanceId: string, tokenHash: string, now: Date): Promise<string | null> {
    const [row] = await this.sql.prepared<{ userId: string }>(
      `SELECT "userId" FROM "PasswordReset" WHERE "instanceId" = $1::uuid AND "tokenHash" = $2 AND "expiresAt" > $3::timestamptz`,
      [instanceId, tokenHash, now],
    );
    return row?.userId ?? null;
  }

  /**
   * Uses the link up and sets the new password in one statement, so two concurrent uses cannot both
   * succeed; tokens issued before `tokensValidAfter` stop working. The account's id, or null when the
   * link is unknown, used or expired.
   */
  async use(
    instanceId: string,
    tokenHash: string,
    now: Date,
    passwordHash: string,
    tokensValidAfter: Date,
  ): Promise<{ id: string; tokensValidAfter: Date } | null> {
    const row = await transaction(this.db.pool, async (tx) => {
      const [used] = await tx.prepared<{ userId: string }>(
        `DELETE FROM "PasswordReset" WHERE "instanceId" = $1::uuid AND "tokenHash" = $2 AND "expiresAt" > $3::timestamptz RETURNING "userId"`,
        [instanceId, tokenHash, now],
      );
      if (!used) return null;
      const after = await endSessionsBefore(tx, instanceId, used.userId, tokensValidAfter, passwordHash);
      return after && { id: used.userId, tokensValidAfter: after };
    });
    if (row) await this.changed(instanceId);
    return row;
  }
}
