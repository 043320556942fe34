// Instances registered at dex: address, public key, fingerprint and trust state.
import type { DexDb } from '../clients';
import type { RegisteredInstance } from '../generated/dex/client';
import { containing, sqlOn, transaction, type Sql } from '../sql';

/** What storing a freshly fetched key did: first key or same key, or a key that differs from the trusted one. */
export type KeyOutcome = 'registered' | 'key-mismatch';

const COLUMNS = `"address", "clusterDomain", "publicKeyPem", "fingerprint", "pendingKeyPem", "state", "registeredAt", "updatedAt", "retiredAt"`;
const FIND = `SELECT ${COLUMNS} FROM "RegisteredInstance" WHERE "address" = $1`;

/** The states as stored and as the API names them. */
export type RegistrationState = 'pending' | 'registered' | 'key-mismatch' | 'retired';

/** What the administrators' console finds instances by; `after`: the last address of the previous page. */
export interface RegisteredInstanceSearch {
  find?: string;
  cluster?: string;
  state?: RegistrationState;
  after?: string;
  take: number;
}

const MATCHING = `($1::text IS NULL OR "address" LIKE $1 ESCAPE '\\') AND ($2::text IS NULL OR "clusterDomain" = $2)
  AND ($3::text IS NULL OR "state"::text = $3)`;

/** The stored state is `key-mismatch`; the schema's name for it (and so the type's) is `key_mismatch`. */
type Row = Omit<RegisteredInstance, 'state'> & { state: 'pending' | 'registered' | 'key-mismatch' | 'retired' };

function registered(row: Row): RegisteredInstance {
  return { ...row, state: row.state === 'key-mismatch' ? 'key_mismatch' : row.state };
}

export class RegisteredInstanceRepository {
  private readonly sql: Sql;

  constructor(private readonly db: DexDb) {
    this.sql = sqlOn(db.pool);
  }

  async find(address: string): Promise<RegisteredInstance | null> {
    const [row] = await this.sql.prepared<Row>(FIND, [address]);
    return row ? registered(row) : null;
  }

  /**
   * Creates the row in state pending unless the address is already known. INSERT … ON CONFLICT, so two
   * concurrent registrations of one address (the client's and the worker's) cannot both try the
   * insert and one fail.
   */
  async ensure(address: string, clusterDomain: string): Promise<RegisteredInstance> {
    const now = new Date();
    await this.sql.count(
      `INSERT INTO "RegisteredInstance" ("address", "clusterDomain", "registeredAt", "updatedAt")
      VALUES ($1, $2, $3::timestamptz, $3::timestamptz) ON CONFLICT ("address") DO NOTHING`,
      [address, clusterDomain, now],
    );
    const found = await this.find(address);
    if (!found) throw new Error(`registered instance ${address} vanished while being ensured`);
    return found;
  }

  /**
   * Removes an address that never got a key (its fetch failed for good), so unauthenticated
   * registerHat calls for names that do not exist leave nothing behind. A registered or key-mismatch
   * row is never touched. True when a row was removed.
   */
  async forgetUnkeyed(address: string): Promise<boolean> {
    const count = await this.sql.count(
      `DELETE FROM "RegisteredInstance" WHERE "address" = $1 AND "state" = 'pending' AND "fingerprint" IS NULL`,
      [address],
    );
    return count > 0;
  }

  /** Removes every pending, never-keyed row last touched before `before`; how many. */
  forgetUnkeyedBefore(before: Date): Promise<number> {
    return this.sql.count(
      `DELETE FROM "RegisteredInstance" WHERE "state" = 'pending' AND "fingerprint" IS NULL AND "updatedAt" < $1::timestamptz`,
      [before],
    );
  }

  /**
   * Stores a fetched key. The first key is trusted; the same key again changes nothing; any other key
   * marks the instance key-mismatch and is parked in pendingKeyPem until an operator re-certifies.
   * Null when the address is not registered at all.
   */
  recordKey(address: string, publicKeyPem: string, fingerprint: string): Promise<KeyOutcome | null> {
    return transaction(this.db.pool, async (tx) => {
      // Row lock: two fetches of the same address must not both see "no key yet".
      const [row] = await tx.prepared<Row>(`${FIND} FOR UPDATE`, [address]);
      // A retired address takes no key again, whoever serves one at it.
      if (!row || row.state === 'retired') return null;
      if (row.fingerprint === null) {
        await tx.count(
          `UPDATE "RegisteredInstance" SET "publicKeyPem" = $2, "fingerprint" = $3, "state" = 'registered', "pendingKeyPem" = NULL,
            "updatedAt" = $4::timestamptz
          WHERE "address" = $1`,
          [address, publicKeyPem, fingerprint, new Date()],
        );
        return 'registered';
      }
      if (row.fingerprint === fingerprint) return row.state === 'registered' ? 'registered' : 'key-mismatch';
      await tx.count(
        `UPDATE "RegisteredInstance" SET "state" = 'key-mismatch', "pendingKeyPem" = $2, "updatedAt" = $3::timestamptz WHERE "address" = $1`,
        [address, publicKeyPem, new Date()],
      );
      return 'key-mismatch';
    });
  }

  /** Trusts the parked key of a key-mismatch instance; false when there is nothing to re-certify. */
  async recertify(address: string, fingerprintOf: (pem: string) => string): Promise<boolean> {
    const row = await this.find(address);
    if (!row || row.state !== 'key_mismatch') return false;
    const publicKeyPem = row.pendingKeyPem ?? row.publicKeyPem;
    if (!publicKeyPem) return false;
    const count = await this.sql.count(
      `UPDATE "RegisteredInstance"
      SET "publicKeyPem" = $3, "fingerprint" = $4, "pendingKeyPem" = NULL, "state" = 'registered', "updatedAt" = $5::timestamptz
      WHERE "address" = $1 AND "state" = 'key-mismatch' AND "updatedAt" = $2::timestamptz`,
      // Only if nothing changed since it was read.
      [address, row.updatedAt, publicKeyPem, fingerprintOf(publicKeyPem), new Date()],
    );
    return count > 0;
  }

  /**
   * Forgets the instance's keys and marks its address retired, for good: registerHat refuses it and no
   * key is stored for it again (its cluster erased the instance). True when it changed now.
   */
  async retire(address: string, at: Date): Promise<boolean> {
    const count = await this.sql.count(
      `UPDATE "RegisteredInstance" SET "state" = 'retired', "publicKeyPem" = NULL, "fingerprint" = NULL, "pendingKeyPem" = NULL,
        "retiredAt" = $2::timestamptz, "updatedAt" = $2::timestamptz
      WHERE "address" = $1 AND "state" <> 'retired'`,
      [address, at],
    );
    return count > 0;
  }

  /** Registered (trusted) instances of a cluster, in address order. */
  async registeredIn(clusterDomain: string): Promise<string[]> {
    const rows = await this.sql.prepared<{ address: string }>(
      `SELECT "address" FROM "RegisteredInstance" WHERE "clusterDomain" = $1 AND "state" = 'registered' ORDER BY "address"`,
      [clusterDomain],
    );
    return rows.map((r) => r.address);
  }

  /** A page of the instances that match, in address order, and how many match in all. */
  async page(search: RegisteredInstanceSearch): Promise<{ total: number; instances: RegisteredInstance[] }> {
    const filter = [search.find ? containing(search.find) : null, search.cluster ?? null, search.state ?? null];
    const [rows, [total]] = await Promise.all([
      this.sql.prepared<Row>(
        `SELECT ${COLUMNS} FROM "RegisteredInstance" WHERE ${MATCHING} AND ($4::text IS NULL OR "address" > $4)
         ORDER BY "address" LIMIT $5`,
        [...filter, search.after ?? null, search.take],
      ),
      this.sql.prepared<{ total: string }>(`SELECT count(*)::text AS "total" FROM "RegisteredInstance" WHERE ${MATCHING}`, filter),
    ]);
    return { total: Number(total?.total ?? 0), instances: rows.map(registered) };
  }

  /** How many instances of each cluster are in each state. */
  async counts(): Promise<{ cluster: string; state: RegistrationState; count: number }[]> {
    const rows = await this.sql.prepared<{ cluster: string; state: RegistrationState; count: string }>(
      `SELECT "clusterDomain" AS "cluster", "state"::text AS "state", count(*)::text AS "count" FROM "RegisteredInstance"
       GROUP BY "clusterDomain", "state" ORDER BY 1, 2`,
      [],
    );
    return rows.map((row) => ({ ...row, count: Number(row.count) }));
  }
}
