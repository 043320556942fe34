import { randomUUID } from 'node:crypto';
import type { GatewayDb } from './clients';
import type { User as UserModel, UserKind } from './generated/gateway/client';
import { commitWithEvents, type Actor, type NewEvent } from './outbox';
import { isUuid, sqlOn, transaction, type Sql } from './sql';

export const USER_COLUMNS = `"id", "instanceId", "username", "email", "fullName", "passwordHash", "kind", "disabled", "createdAt", "tokensValidAfter", "totpEnabled"`;

/** An account as the repositories return it: the second factor's secrets are read only where checked (totp.ts). */
export type User = Omit<UserModel, 'totpSecretEnc' | 'totpLastStep' | 'totpRecoveryHashes'>;

/** A new account ($1 instance, $2 id … $8 createdAt); no row when the username is taken in the instance. */
export const INSERT_USER = `INSERT INTO "User" ("instanceId", "id", "username", "email", "fullName", "passwordHash", "kind", "createdAt")
  VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6, $7, $8::timestamptz)
  ON CONFLICT ("instanceId", "username") DO NOTHING RETURNING ${USER_COLUMNS}`;

/** An account event's object. */
const userEvent = (type: string, user: Pick<User, 'id' | 'username' | 'kind'>): NewEvent => ({
  type,
  object: { userId: user.id, username: user.username, kind: user.kind },
});

/** The owner's own details are the instance's settings. */
const UPDATE_DETAILS = `UPDATE "User" SET "email" = CASE WHEN $4 THEN $3 ELSE "email" END, "fullName" = CASE WHEN $6 THEN $5 ELSE "fullName" END
  WHERE "instanceId" = $1::uuid AND "id" = $2::uuid RETURNING ${USER_COLUMNS}`;

/**
 * What every authenticated request checks of the account behind its token, and all a gateway caches
 * of it: never the password hash, e-mail or name (docs/performance.md).
 */
export type Account = Pick<User, 'id' | 'kind' | 'disabled' | 'tokensValidAfter'>;

/** Told after a change to an instance's accounts is committed (the gateway drops its cached accounts). */
export type AccountsChanged = (instanceId: string) => Promise<void>;

export interface NewUser {
  username: string;
  email?: string;
  fullName?: string;
  passwordHash?: string;
  kind: UserKind;
}

/**
 * Moves the account's "tokens valid after" to `requested`, or a second past the stored instant when that is
 * later, in the transaction `tx` (the row locked first), and sets the password hash when one is given; the
 * instant stored, or null when there is no such account. A token is dated no earlier than the stored
 * instant (AuthService.issue), so a session begun just after an earlier change, in the same second, must
 * still end with this one. Computed here rather than in the UPDATE: timestamptz + interval is STABLE, which
 * Citus does not evaluate on a column.
 */
export async function endSessionsBefore(
  tx: Sql,
  instanceId: string,
  id: string,
  requested: Date,
  passwordHash?: string,
): Promise<Date | null> {
  const [row] = await tx.prepared<{ tokensValidAfter: Date | null }>(
    `SELECT "tokensValidAfter" FROM "User" WHERE "instanceId" = $1::uuid AND "id" = $2::uuid FOR UPDATE`,
    [instanceId, id],
  );
  if (!row) return null;
  const after = new Date(Math.max(requested.getTime(), (row.tokensValidAfter?.getTime() ?? 0) + 1000));
  // The column keeps whole seconds: the instant as stored is the one tokens are dated against.
  const [stored] = await tx.prepared<{ tokensValidAfter: Date }>(
    `UPDATE "User" SET "tokensValidAfter" = $3::timestamptz, "passwordHash" = coalesce($4, "passwordHash")
     WHERE "instanceId" = $1::uuid AND "id" = $2::uuid RETURNING "tokensValidAfter"`,
    [instanceId, id, after, passwordHash ?? null],
  );
  return stored!.tokensValidAfter;
}

/** Every method takes the instance id first: no query can reach another instance's accounts. */
export class UserRepository {
  private readonly sql: Sql;

  constructor(
    private readonly db: GatewayDb,
    private readonly changed: AccountsChanged = async () => undefined,
  ) {
    this.sql = sqlOn(db.pool);
  }

  /** The account behind a token: read on every authenticated request not served from a cache. */
  async findAccount(instanceId: string, id: string): Promise<Account | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.sql.prepared<Account>(
      `SELECT "id", "kind", "disabled", "tokensValidAfter" FROM "User" WHERE "instanceId" = $1::uuid AND "id" = $2::uuid`,
      [instanceId, id],
    );
    return row ?? null;
  }

  async findById(instanceId: string, id: string): Promise<User | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.sql.prepared<User>(`SELECT ${USER_COLUMNS} FROM "User" WHERE "instanceId" = $1::uuid AND "id" = $2::uuid`, [
      instanceId,
      id,
    ]);
    return row ?? null;
  }

  async findByUsername(instanceId: string, username: string): Promise<User | null> {
    const [row] = await this.sql.prepared<User>(`SELECT ${USER_COLUMNS} FROM "User" WHERE "instanceId" = $1::uuid AND "username" = $2`, [
      instanceId,
      username,
    ]);
    return row ?? null;
  }

  /** The instance's owner (every instance has one). */
  async findOwner(instanceId: string): Promise<User | null> {
    const [row] = await this.sql.prepared<User>(
      `SELECT ${USER_COLUMNS} FROM "User" WHERE "instanceId" = $1::uuid AND "kind" = 'owner' ORDER BY "createdAt" LIMIT 1`,
      [instanceId],
    );
    return row ?? null;
  }

  /**
   * A new password hash; tokens issued before the instant returned stop working on every gateway (the
   * account is part of the cache that `changed` clears). Null when no such account.
   */
  async setPassword(instanceId: string, id: string, passwordHash: string, tokensValidAfter: Date): Promise<Date | null> {
    if (!isUuid(id)) return null;
    const after = await transaction(this.db.pool, (tx) => endSessionsBefore(tx, instanceId, id, tokensValidAfter, passwordHash));
    if (after) await this.changed(instanceId);
    return after;
  }

  /** Ends every session of the account begun before `tokensValidAfter` ("log out everywhere"). */
  async endSessions(instanceId: string, id: string, tokensValidAfter: Date): Promise<boolean> {
    if (!isUuid(id)) return false;
    const after = await transaction(this.db.pool, (tx) => endSessionsBefore(tx, instanceId, id, tokensValidAfter));
    if (after) await this.changed(instanceId);
    return after !== null;
  }

  /** Null when the username is taken in this instance. */
  async create(instanceId: string, user: NewUser, actor: Actor): Promise<User | null> {
    return transaction(this.db.pool, async (tx) => {
      const [row] = await tx.prepared<User>(INSERT_USER, [
        instanceId,
        randomUUID(),
        user.username,
        user.email ?? null,
        user.fullName ?? null,
        user.passwordHash ?? null,
        user.kind,
        new Date(),
      ]);
      if (row) await commitWithEvents(tx, instanceId, [userEvent('user.created', row)], actor);
      return row ?? null;
    });
  }

  list(instanceId: string): Promise<User[]> {
    return this.sql.prepared<User>(`SELECT ${USER_COLUMNS} FROM "User" WHERE "instanceId" = $1::uuid ORDER BY "createdAt", "id"`, [
      instanceId,
    ]);
  }

  /** Null when no such user. */
  async setDisabled(instanceId: string, id: string, disabled: boolean, actor: Actor): Promise<User | null> {
    if (!isUuid(id)) return null;
    const row = await transaction(this.db.pool, async (tx) => {
      const [changed] = await tx.prepared<User>(
        `UPDATE "User" SET "disabled" = $3 WHERE "instanceId" = $1::uuid AND "id" = $2::uuid RETURNING ${USER_COLUMNS}`,
        [instanceId, id, disabled],
      );
      if (changed) await commitWithEvents(tx, instanceId, [userEvent(disabled ? 'user.disabled' : 'user.enabled', changed)], actor);
      return changed;
    });
    if (!row) return null;
    await this.changed(instanceId);
    return row;
  }

  /** Sets the e-mail and full name given (null clears one, absent leaves it); null when no such user. */
  async updateDetails(
    instanceId: string,
    id: string,
    details: { email?: string | null; fullName?: string | null },
    actor: Actor,
  ): Promise<User | null> {
    if (!isUuid(id)) return null;
    return transaction(this.db.pool, async (tx) => {
      const [row] = await tx.prepared<User>(UPDATE_DETAILS, [
        instanceId,
        id,
        details.email ?? null,
        details.email !== undefined,
        details.fullName ?? null,
        details.fullName !== undefined,
      ]);
      if (row) await commitWithEvents(tx, instanceId, [userEvent(row.kind === 'owner' ? 'settings.changed' : 'user.updated', row)], actor);
      return row ?? null;
    });
  }

  async delete(instanceId: string, id: string, actor: Actor): Promise<boolean> {
    if (!isUuid(id)) return false;
    const removed = await transaction(this.db.pool, async (tx) => {
      const [row] = await tx.prepared<Pick<User, 'id' | 'username' | 'kind'>>(
        `DELETE FROM "User" WHERE "instanceId" = $1::uuid AND "id" = $2::uuid RETURNING "id", "username", "kind"`,
        [instanceId, id],
      );
      if (row) await commitWithEvents(tx, instanceId, [userEvent('user.deleted', row)], actor);
      return row !== undefined;
    });
    if (removed) await this.changed(instanceId);
    return removed;
  }
}
