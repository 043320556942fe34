import type { GatewayDb } from './clients';
import type { Instance, User } from './generated/gateway/client';
import { preparedRows, type Rows } from './sql';

const INSTANCE_COLUMNS = `"id", "address", "publicKeyPem", "privateKeyEnc", "keyId", "dexState", "createdAt"`;

export interface NewInstance {
  address: string;
  publicKeyPem: string;
  privateKeyEnc: string;
  keyId: string;
  owner: { username: string; email: string; fullName: string; passwordHash: string };
}

export class InstanceRepository {
  private readonly rows: Rows;

  constructor(private readonly db: GatewayDb) {
    this.rows = preparedRows(db.pool);
  }

  /** Every request's first read (on a registry miss): a prepared statement. */
  async findByAddress(address: string): Promise<Instance | null> {
    const [row] = await this.rows<Instance>(`SELECT ${INSTANCE_COLUMNS} FROM "Instance" WHERE "address" = $1`, [address]);
    return row ?? null;
  }

  /** Creates the instance and its owner account together; null when the address is taken. */
  async createWithOwner(input: NewInstance): Promise<{ instance: Instance; owner: User } | null> {
    try {
      return await this.db.$transaction(async (tx) => {
        const instance = await tx.instance.create({
          data: { address: input.address, publicKeyPem: input.publicKeyPem, privateKeyEnc: input.privateKeyEnc, keyId: input.keyId },
        });
        const owner = await tx.user.create({ data: { instanceId: instance.id, kind: 'owner', ...input.owner } });
        return { instance, owner };
      });
    } catch (error) {
      if ((error as { code?: string }).code === 'P2002') return null;
      throw error;
    }
  }
}
