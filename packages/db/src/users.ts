import type { GatewayDb } from './clients';
import type { User, UserKind } from './generated/gateway/client';

export interface NewUser {
  username: string;
  email?: string;
  fullName?: string;
  passwordHash?: string;
  kind: UserKind;
}

/** Every method takes the instance id first: no query can reach another instance's accounts. */
export class UserRepository {
  constructor(private readonly db: GatewayDb) {}

  findById(instanceId: string, id: string): Promise<User | null> {
    return this.db.user.findUnique({ where: { instanceId_id: { instanceId, id } } });
  }

  findByUsername(instanceId: string, username: string): Promise<User | null> {
    return this.db.user.findUnique({ where: { instanceId_username: { instanceId, username } } });
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
    return count === 0 ? null : this.findById(instanceId, id);
  }

  async delete(instanceId: string, id: string): Promise<boolean> {
    const { count } = await this.db.user.deleteMany({ where: { instanceId, id } });
    return count > 0;
  }
}
