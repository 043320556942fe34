import { randomUUID } from 'node:crypto';
import type { GatewayDb } from './clients';
import type { User as UserModel, UserKind } from './generated/gateway/client';
import { eventCte, eventValues, type Actor } from './outbox';
import { isUuid, sqlOn, type Sql } from './sql';

export const USER_COLUMNS = `"id", "instanceId", "username", "email", "fullName", "passwordHash", "kind", "disabled", "createdAt", "tokensValidAfter", "totpEnabled"`;

/** An account as the repositories return it: the second factor's secrets are read only where checked (totp.ts). */
export type User = Omit<UserModel, 'totpSecretEnc' | 'totpLastStep' | 'totpRecoveryHashes'>;

/** A new account ($1 instance, $2 id … $8 createdAt); no row when the username is taken in the instance. */
export const INSERT_USER = `INSERT INTO "User" ("instanceId", "id", "username", "email", "fullName", "passwordHash", "kind", "createdAt")
  VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6, $7, $8::timestamptz)
  ON CONFLICT ("instanceId", "username") DO NOTHING RETURNING ${USER_COLUMNS}`;

const USER_OBJECT = `jsonb_build_object('userId', "id", 'username', "username", 'kind', "kind")`;

/** `INSERT_USER` with its event (outbox.ts): the owner's account is created with its instance, without one. */
const CREATE_USER = `WITH "created" AS (${INSERT_USER}),
  ${eventCte('"created"', `'user.created'`, USER_OBJECT, 9)}
  SELECT * FROM "created"`;

/** An account changed by `set`; $1 instance, $2 id, then set's values, then the event's from `first` on. */
const changeUser = (set: string, type: string, first: number) => `WITH "changed" AS (
    UPDATE "User" SET ${set} WHERE "instanceId" = $1::uuid AND "id" = $2::uuid RETURNING ${USER_COLUMNS}
  ),
  ${eventCte('"changed"', type, USER_OBJECT, first)}
  SELECT * FROM "changed"`;

const SET_DISABLED = changeUser(`"disabled" = $3`, `CASE WHEN $3 THEN 'user.disabled' ELSE 'user.enabled' END`, 4);
/** The owner's own details are the instance's settings. */
const UPDATE_DETAILS = changeUser(
  `"email" = CASE WHEN $4 THEN $3 ELSE "email" END, "fullName" = CASE WHEN $6 THEN $5 ELSE "fullName" END`,
  `CASE WHEN "kind" = 'owner' THEN 'settings.changed' ELSE 'user.updated' END`,
  7,
);
const DELETE_USER = `WITH "removed" AS (DELETE FROM "User" WHERE "instanceId" = $1::uuid AND "id" = $2::uuid RETURNING "id", "username", "kind"),
  ${eventCte('"removed"', `'user.deleted'`, USER_OBJECT, 3)}
  SELECT count(*)::int AS "count" FROM "removed"`;

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

/** Every method takes the instance id first: no query can reach another instance's accounts. */
/**
 * The new "tokens valid after" instant: the one asked for, or a second past the stored one when that is
 * later. A token is dated no earlier than the stored instant (AuthService.issue), so a session begun
 * just after an earlier change, in the same second, must still end with this one.
 */
export const LATER_THAN_EVERY_SESSION = (param: string) => `GREATEST(${param}::timestamptz, "tokensValidAfter" + interval '1 second')`;

export class UserRepository {
  private readonly sql: Sql;

  constructor(
    db: GatewayDb,
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
    const [row] = await this.sql.prepared<{ tokensValidAfter: Date }>(
      `UPDATE "User" SET "passwordHash" = $3, "tokensValidAfter" = ${LATER_THAN_EVERY_SESSION('$4')}
       WHERE "instanceId" = $1::uuid AND "id" = $2::uuid RETURNING "tokensValidAfter"`,
      [instanceId, id, passwordHash, tokensValidAfter],
    );
    if (row) await this.changed(instanceId);
    return row?.tokensValidAfter ?? null;
  }

  /** Ends every session of the account begun before `tokensValidAfter` ("log out everywhere"). */
  async endSessions(instanceId: string, id: string, tokensValidAfter: Date): Promise<boolean> {
    if (!isUuid(id)) return false;
    const count = await this.sql.count(
      `UPDATE "User" SET "tokensValidAfter" = ${LATER_THAN_EVERY_SESSION('$3')} WHERE "instanceId" = $1::uuid AND "id" = $2::uuid`,
      [instanceId, id, tokensValidAfter],
    );
    if (count > 0) await this.changed(instanceId);
    return count > 0;
  }

  /** Null when the username is taken in this instance. */
  async create(instanceId: string, user: NewUser, actor: Actor): Promise<User | null> {
    const [row] = await this.sql.prepared<User>(CREATE_USER, [
      instanceId,
      randomUUID(),
      user.username,
      user.email ?? null,
      user.fullName ?? null,
      user.passwordHash ?? null,
      user.kind,
      new Date(),
      ...eventValues(actor),
    ]);
    return row ?? null;
  }

  list(instanceId: string): Promise<User[]> {
    return this.sql.prepared<User>(`SELECT ${USER_COLUMNS} FROM "User" WHERE "instanceId" = $1::uuid ORDER BY "createdAt", "id"`, [
      instanceId,
    ]);
  }

  /** Null when no such user. */
  async setDisabled(instanceId: string, id: string, disabled: boolean, actor: Actor): Promise<User | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.sql.prepared<User>(SET_DISABLED, [instanceId, id, disabled, ...eventValues(actor)]);
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
    const [row] = await this.sql.prepared<User>(UPDATE_DETAILS, [
      instanceId,
      id,
      details.email ?? null,
      details.email !== undefined,
      details.fullName ?? null,
      details.fullName !== undefined,
      ...eventValues(actor),
    ]);
    return row ?? null;
  }

  async delete(instanceId: string, id: string, actor: Actor): Promise<boolean> {
    if (!isUuid(id)) return false;
    const [row] = await this.sql.prepared<{ count: number }>(DELETE_USER, [instanceId, id, ...eventValues(actor)]);
    const count = row?.count ?? 0;
    if (count > 0) await this.changed(instanceId);
    return count > 0;
  }
}
