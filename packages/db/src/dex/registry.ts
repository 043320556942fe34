// Dex's trust roots: certified cluster domains and administrator addresses. Seeding is idempotent.
import type { DexDb } from '../clients';
import { sqlOn, type Sql } from '../sql';

export class CertifiedClusterRepository {
  private readonly sql: Sql;

  constructor(db: DexDb) {
    this.sql = sqlOn(db.pool);
  }

  async ensure(domains: string[]): Promise<void> {
    if (domains.length === 0) return;
    await this.sql.count(
      `INSERT INTO "CertifiedCluster" ("domain", "createdAt") SELECT d, $2::timestamptz FROM unnest($1::text[]) AS d ON CONFLICT DO NOTHING`,
      [domains, new Date()],
    );
  }

  async isCertified(domain: string): Promise<boolean> {
    return (await this.sql.prepared(`SELECT 1 FROM "CertifiedCluster" WHERE "domain" = $1`, [domain])).length > 0;
  }

  async list(): Promise<string[]> {
    const rows = await this.sql.prepared<{ domain: string }>(`SELECT "domain" FROM "CertifiedCluster" ORDER BY "domain"`, []);
    return rows.map((r) => r.domain);
  }
}

export class AdminRepository {
  private readonly sql: Sql;

  constructor(db: DexDb) {
    this.sql = sqlOn(db.pool);
  }

  async ensure(addresses: string[]): Promise<void> {
    if (addresses.length === 0) return;
    await this.sql.count(
      `INSERT INTO "Admin" ("address", "createdAt") SELECT a, $2::timestamptz FROM unnest($1::text[]) AS a ON CONFLICT DO NOTHING`,
      [addresses, new Date()],
    );
  }

  async remove(address: string): Promise<boolean> {
    return (await this.sql.count(`DELETE FROM "Admin" WHERE "address" = $1`, [address])) > 0;
  }

  async isAdmin(address: string): Promise<boolean> {
    return (await this.sql.prepared(`SELECT 1 FROM "Admin" WHERE "address" = $1`, [address])).length > 0;
  }

  /** The administrator's console password hash: null when none was set, undefined when the address is no administrator. */
  async passwordHash(address: string): Promise<string | null | undefined> {
    const [row] = await this.sql.prepared<{ passwordHash: string | null }>(`SELECT "passwordHash" FROM "Admin" WHERE "address" = $1`, [
      address,
    ]);
    return row ? row.passwordHash : undefined;
  }

  /** Sets an administrator's console password; false when the address is no administrator. */
  async setPassword(address: string, passwordHash: string): Promise<boolean> {
    return (await this.sql.count(`UPDATE "Admin" SET "passwordHash" = $2 WHERE "address" = $1`, [address, passwordHash])) > 0;
  }

  async list(): Promise<string[]> {
    const rows = await this.sql.prepared<{ address: string }>(`SELECT "address" FROM "Admin" ORDER BY "address"`, []);
    return rows.map((r) => r.address);
  }
}
