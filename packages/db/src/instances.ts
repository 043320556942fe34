import { randomUUID } from 'node:crypto';
import type { GatewayDb } from './clients';
import type { Instance, User } from './generated/gateway/client';
import { postgresErrorCode, sqlOn, transaction, UNIQUE_VIOLATION, type Sql } from './sql';
import { INSERT_USER } from './users';

const INSTANCE_COLUMNS = `"id", "address", "publicKeyPem", "privateKeyEnc", "keyId", "dexState", "createdAt"`;

const INSERT_INSTANCE = `INSERT INTO "Instance" ("id", "address", "publicKeyPem", "privateKeyEnc", "keyId", "createdAt")
  VALUES ($1::uuid, $2, $3, $4, $5, $6::timestamptz) RETURNING ${INSTANCE_COLUMNS}`;

export interface NewInstance {
  address: string;
  publicKeyPem: string;
  privateKeyEnc: string;
  keyId: string;
  owner: { username: string; email: string; fullName: string; passwordHash: string };
}

export class InstanceRepository {
  private readonly sql: Sql;

  constructor(private readonly db: GatewayDb) {
    this.sql = sqlOn(db.pool);
  }

  /** Every request's first read (on a registry miss): a prepared statement. */
  async findByAddress(address: string): Promise<Instance | null> {
    const [row] = await this.sql.prepared<Instance>(`SELECT ${INSTANCE_COLUMNS} FROM "Instance" WHERE "address" = $1`, [address]);
    return row ?? null;
  }

  /** Which of these addresses an instance holds (a sign-up name check). */
  async takenAddresses(addresses: string[]): Promise<string[]> {
    const rows = await this.sql.prepared<{ address: string }>(`SELECT "address" FROM "Instance" WHERE "address" = ANY($1::text[])`, [
      addresses,
    ]);
    return rows.map((row) => row.address);
  }

  /** Creates the instance and its owner account together; null when the address is taken. */
  async createWithOwner(input: NewInstance): Promise<{ instance: Instance; owner: User } | null> {
    const now = new Date();
    try {
      return await transaction(this.db.pool, async (tx) => {
        const [instance] = await tx.prepared<Instance>(INSERT_INSTANCE, [
          randomUUID(),
          input.address,
          input.publicKeyPem,
          input.privateKeyEnc,
          input.keyId,
          now,
        ]);
        const { username, email, fullName, passwordHash } = input.owner;
        const [owner] = await tx.prepared<User>(INSERT_USER, [
          instance!.id,
          randomUUID(),
          username,
          email,
          fullName,
          passwordHash,
          'owner',
          now,
        ]);
        return { instance: instance!, owner: owner! };
      });
    } catch (error) {
      if (postgresErrorCode(error) === UNIQUE_VIOLATION) return null;
      throw error;
    }
  }
}
