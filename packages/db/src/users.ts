import type { GatewayDb } from './clients';
import type { User, UserKind } from './generated/gateway/client';
import { isUuid, preparedRows, type Rows } from './sql';

const USER_COLUMNS = `"id", "instanceId", "username", "email", "fullName", "passwordHash", "kind", "disabled", "createdAt"`;

/**
 * What every authenticated request checks of the account behind its token, and all a gateway caches
 * of it: never the password hash, e-mail or name (docs/performance.md).
 */
export type Account = Pick<User, 'id' | 'kind' | 'disabled'>;

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
export class UserRepository {
  private readonly rows: Rows;

  constructor(
    private readonly db: GatewayDb,
    private readonly changed: AccountsChanged = async () => undefined,
  ) {
    this.rows = preparedRows(db.pool);
  }

  /** The account behind a token: read on every authenticated request not served from a cache. */
  async findAccount(instanceId: string, id: string): Promise<Account | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.rows<Account>(
      `SELECT "id", "kind", "disabled" FROM "User" WHERE "instanceId" = $1::uuid AND "id" = $2::uuid`,
      [instanceId, id],
    );
    return row ?? null;
  }

  async findById(instanceId: string, id: string): Promise<User | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.rows<User>(`SELECT ${USER_COLUMNS} FROM "User" WHERE "instanceId" = $1::uuid AND "id" = $2::uuid`, [
      instanceId,
      id,
    ]);
    return row ?? null;
  }

  async findByUsername(instanceId: string, username: string): Promise<User | null> {
    const [row] = await this.rows<User>(`SELECT ${USER_COLUMNS} FROM "User" WHERE "instanceId" = $1::uuid AND "username" = $2`, [
      instanceId,
      username,
    ]);
    return row ?? null;
  }

  /** Null when the username is taken in this instance. */
  async create(instanceId: string, user: NewUser): Promise<User | null> {
    try {
      return await this.db.user.create({ data: { instanceId, ...user } });
    } catch (error) {
      if ((error as { code?: string }).code === 'P2002') return null;
      throw error;
    }
  }

  list(instanceId: string): Promise<User[]> {
    return this.db.user.findMany({ where: { instanceId }, orderBy: { createdAt: 'asc' } });
  }

  /** Null when no such user. */
  async setDisabled(instanceId: string, id: string, disabled: boolean): Promise<User | null> {
    const { count } = await this.db.user.updateMany({ where: { instanceId, id }, data: { disabled } });
    if (count === 0) return null;
    await this.changed(instanceId);
    return this.findById(instanceId, id);
  }

  async delete(instanceId: string, id: string): Promise<boolean> {
    const { count } = await this.db.user.deleteMany({ where: { instanceId, id } });
    if (count > 0) await this.changed(instanceId);
    return count > 0;
  }
}
