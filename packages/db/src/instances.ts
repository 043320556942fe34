import { randomUUID } from 'node:crypto';
import type { GatewayDb } from './clients';
import type { Instance } from './generated/gateway/client';
import type { User } from './users';
import { postgresErrorCode, sqlOn, transaction, UNIQUE_VIOLATION, type Sql } from './sql';
import { INSERT_USER } from './users';

const INSTANCE_COLUMNS = `"id", "address", "publicKeyPem", "privateKeyEnc", "keyId", "dexState", "createdAt", "state"`;

/** What requests need of an instance: its keys and its state (the operator's columns are read by InstanceAdminRepository). */
export type InstanceRow = Pick<
  Instance,
  'id' | 'address' | 'publicKeyPem' | 'privateKeyEnc' | 'keyId' | 'dexState' | 'createdAt' | 'state'
>;

/** Written at most once per this interval per instance: activity is a day-scale figure for the operator. */
const ACTIVITY_GRANULARITY_MS = 60 * 60 * 1000;

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
  async findByAddress(address: string): Promise<InstanceRow | null> {
    const [row] = await this.sql.prepared<InstanceRow>(`SELECT ${INSTANCE_COLUMNS} FROM "Instance" WHERE "address" = $1`, [address]);
    return row ?? null;
  }

  /** An instance by id (the webhook job signs with its key). */
  async findById(id: string): Promise<InstanceRow | null> {
    const [row] = await this.sql.prepared<InstanceRow>(`SELECT ${INSTANCE_COLUMNS} FROM "Instance" WHERE "id" = $1::uuid`, [id]);
    return row ?? null;
  }

  /** Which of these addresses an instance holds, or a closed instance held (a sign-up name check). */
  async takenAddresses(addresses: string[]): Promise<string[]> {
    const rows = await this.sql.prepared<{ address: string }>(
      `SELECT "address" FROM "Instance" WHERE "address" = ANY($1::text[])
       UNION SELECT "address" FROM "RetiredAddress" WHERE "address" = ANY($1::text[])`,
      [addresses],
    );
    return rows.map((row) => row.address);
  }

  /** Whether a closed and erased instance held this address: it is never signed up for again. */
  async isRetired(address: string): Promise<boolean> {
    return (await this.sql.prepared(`SELECT 1 FROM "RetiredAddress" WHERE "address" = $1`, [address])).length > 0;
  }

  /** Creates the instance and its owner account together; null when the address is taken. */
  /**
   * Records that the instance was used at `at` (a token was issued). The row is written only when the
   * last record is an hour old or more, so busy instances cost one write an hour.
   */
  async touchActivity(instanceId: string, at: Date): Promise<void> {
    await this.sql.count(
      `UPDATE "Instance" SET "lastActiveAt" = $2::timestamptz
       WHERE "id" = $1::uuid AND ("lastActiveAt" IS NULL OR "lastActiveAt" < $3::timestamptz)`,
      [instanceId, at, new Date(at.getTime() - ACTIVITY_GRANULARITY_MS)],
    );
  }

  async createWithOwner(input: NewInstance): Promise<{ instance: InstanceRow; owner: User } | null> {
    const now = new Date();
    try {
      return await transaction(this.db.pool, async (tx) => {
        const [instance] = await tx.prepared<InstanceRow>(INSERT_INSTANCE, [
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
