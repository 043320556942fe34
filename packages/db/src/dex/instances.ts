// Instances registered at dex: address, public key, fingerprint and trust state.
import type { DexDb } from '../clients';
import type { RegisteredInstance } from '../generated/dex/client';

/** What storing a freshly fetched key did: first key or same key, or a key that differs from the trusted one. */
export type KeyOutcome = 'registered' | 'key-mismatch';

export class RegisteredInstanceRepository {
  constructor(private readonly db: DexDb) {}

  find(address: string): Promise<RegisteredInstance | null> {
    return this.db.registeredInstance.findUnique({ where: { address } });
  }

  /**
   * Creates the row in state pending unless the address is already known. One INSERT … ON CONFLICT
   * statement: a Prisma upsert is a read then a write, so two concurrent registrations of one address
   * (the client's and the worker's) could both try the insert and one would fail.
   */
  async ensure(address: string, clusterDomain: string): Promise<RegisteredInstance> {
    await this.db.$executeRaw`
      INSERT INTO "RegisteredInstance" ("address", "clusterDomain", "updatedAt") VALUES (${address}, ${clusterDomain}, now())
      ON CONFLICT ("address") DO NOTHING`;
    return this.db.registeredInstance.findUniqueOrThrow({ where: { address } });
  }

  /**
   * Removes an address that never got a key (its fetch failed for good), so unauthenticated
   * registerHat calls for names that do not exist leave nothing behind. A registered or key-mismatch
   * row is never touched. True when a row was removed.
   */
  async forgetUnkeyed(address: string): Promise<boolean> {
    const { count } = await this.db.registeredInstance.deleteMany({ where: { address, state: 'pending', fingerprint: null } });
    return count > 0;
  }

  /** Removes every pending, never-keyed row last touched before `before`; how many. */
  async forgetUnkeyedBefore(before: Date): Promise<number> {
    const { count } = await this.db.registeredInstance.deleteMany({
      where: { state: 'pending', fingerprint: null, updatedAt: { lt: before } },
    });
    return count;
  }

  /**
   * Stores a fetched key. The first key is trusted; the same key again changes nothing; any other key
   * marks the instance key-mismatch and is parked in pendingKeyPem until an operator re-certifies.
   * Null when the address is not registered at all.
   */
  recordKey(address: string, publicKeyPem: string, fingerprint: string): Promise<KeyOutcome | null> {
    return this.db.$transaction(async (tx) => {
      // Row lock: two fetches of the same address must not both see "no key yet".
      const locked = await tx.$queryRaw<
        { address: string }[]
      >`select address from "RegisteredInstance" where address = ${address} for update`;
      if (locked.length === 0) return null;
      const row = await tx.registeredInstance.findUniqueOrThrow({ where: { address } });
      if (row.fingerprint === null) {
        await tx.registeredInstance.update({
          where: { address },
          data: { publicKeyPem, fingerprint, state: 'registered', pendingKeyPem: null },
        });
        return 'registered';
      }
      if (row.fingerprint === fingerprint) return row.state === 'registered' ? 'registered' : 'key-mismatch';
      await tx.registeredInstance.update({ where: { address }, data: { state: 'key_mismatch', pendingKeyPem: publicKeyPem } });
      return 'key-mismatch';
    });
  }

  /** Trusts the parked key of a key-mismatch instance; false when there is nothing to re-certify. */
  async recertify(address: string, fingerprintOf: (pem: string) => string): Promise<boolean> {
    const row = await this.find(address);
    if (!row || row.state !== 'key_mismatch') return false;
    const publicKeyPem = row.pendingKeyPem ?? row.publicKeyPem;
    if (!publicKeyPem) return false;
    const { count } = await this.db.registeredInstance.updateMany({
      // Only if nothing changed since it was read.
      where: { address, state: 'key_mismatch', updatedAt: row.updatedAt },
      data: { publicKeyPem, fingerprint: fingerprintOf(publicKeyPem), pendingKeyPem: null, state: 'registered' },
    });
    return count > 0;
  }

  /** Registered (trusted) instances of a cluster, in address order. */
  async registeredIn(clusterDomain: string): Promise<string[]> {
    const rows = await this.db.registeredInstance.findMany({
      where: { clusterDomain, state: 'registered' },
      select: { address: true },
      orderBy: { address: 'asc' },
    });
    return rows.map((r) => r.address);
  }

  list(options: { take?: number } = {}): Promise<RegisteredInstance[]> {
    return this.db.registeredInstance.findMany({ orderBy: { address: 'asc' }, take: options.take ?? 1000 });
  }
}
