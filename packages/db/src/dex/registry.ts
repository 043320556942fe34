// Dex's trust roots: certified cluster domains and administrator addresses. Seeding is idempotent.
import type { DexDb } from '../clients';

export class CertifiedClusterRepository {
  constructor(private readonly db: DexDb) {}

  async ensure(domains: string[]): Promise<void> {
    if (domains.length === 0) return;
    await this.db.certifiedCluster.createMany({ data: domains.map((domain) => ({ domain })), skipDuplicates: true });
  }

  async isCertified(domain: string): Promise<boolean> {
    return (await this.db.certifiedCluster.count({ where: { domain } })) > 0;
  }

  async list(): Promise<string[]> {
    const rows = await this.db.certifiedCluster.findMany({ orderBy: { domain: 'asc' } });
    return rows.map((r) => r.domain);
  }
}

export class AdminRepository {
  constructor(private readonly db: DexDb) {}

  async ensure(addresses: string[]): Promise<void> {
    if (addresses.length === 0) return;
    await this.db.admin.createMany({ data: addresses.map((address) => ({ address })), skipDuplicates: true });
  }

  async remove(address: string): Promise<boolean> {
    const { count } = await this.db.admin.deleteMany({ where: { address } });
    return count > 0;
  }

  async isAdmin(address: string): Promise<boolean> {
    return (await this.db.admin.count({ where: { address } })) > 0;
  }

  async list(): Promise<string[]> {
    const rows = await this.db.admin.findMany({ orderBy: { address: 'asc' } });
    return rows.map((r) => r.address);
  }
}
