// Data debits: a bundle's records offered to one account under terms (permissions) the owner accepts.
import type { GatewayDb } from './clients';
import type { DataDebit, DataDebitPermission } from './generated/gateway/client';

export type DebitPermission = DataDebitPermission & { bundle: { name: string; query: unknown } };
export type DebitWithPermissions = DataDebit & { permissions: DebitPermission[] };

export interface DebitRequest {
  requestClientName: string;
  requestClientUrl: string;
  requestClientLogoUrl: string;
  requestApplicationId?: string;
  requestDescription?: string;
  holderId?: string;
}

export interface DebitTerms {
  purpose: string;
  start: Date;
  /** Seconds. */
  period: number;
  cancelAtPeriodEnd: boolean;
  termsUrl: string;
  bundleName: string;
}

const withPermissions = { permissions: { orderBy: { id: 'asc' }, include: { bundle: { select: { name: true, query: true } } } } } as const;

export class DataDebitRepository {
  constructor(private readonly db: GatewayDb) {}

  find(instanceId: string, key: string): Promise<DebitWithPermissions | null> {
    return this.db.dataDebit.findUnique({ where: { instanceId_key: { instanceId, key } }, include: withPermissions });
  }

  list(instanceId: string): Promise<DebitWithPermissions[]> {
    return this.db.dataDebit.findMany({ where: { instanceId }, orderBy: { key: 'asc' }, include: withPermissions });
  }

  /** A new debit with its first terms (one transaction), not yet accepted; null when the key is taken. */
  async create(instanceId: string, key: string, request: DebitRequest, terms: DebitTerms): Promise<DebitWithPermissions | null> {
    const created = await this.db.$transaction(async (tx) => {
      const [row] = await tx.$queryRaw<{ key: string }[]>`
        INSERT INTO "DataDebit" ("instanceId", "key", "requestClientName", "requestClientUrl", "requestClientLogoUrl",
                                 "requestApplicationId", "requestDescription", "holderId")
        VALUES (${instanceId}::uuid, ${key}, ${request.requestClientName}, ${request.requestClientUrl}, ${request.requestClientLogoUrl},
                ${request.requestApplicationId ?? null}, ${request.requestDescription ?? null}, ${request.holderId ?? null}::uuid)
        ON CONFLICT DO NOTHING RETURNING "key"`;
      if (row) await tx.dataDebitPermission.create({ data: { instanceId, debitKey: key, ...terms } });
      return row !== undefined;
    });
    return created ? this.find(instanceId, key) : null;
  }

  /** New terms for an existing debit (not accepted until enabled); null when the debit does not exist. */
  async addTerms(
    instanceId: string,
    key: string,
    terms: DebitTerms,
    request?: Partial<DebitRequest>,
  ): Promise<DebitWithPermissions | null> {
    const added = await this.db.$transaction(async (tx) => {
      const { count } = await tx.dataDebit.updateMany({ where: { instanceId, key }, data: request ?? {} });
      if (count > 0) await tx.dataDebitPermission.create({ data: { instanceId, debitKey: key, ...terms } });
      return count > 0;
    });
    return added ? this.find(instanceId, key) : null;
  }

  /** Accepts the newest terms and ends any cancellation of them; null when the debit does not exist. */
  async enable(instanceId: string, key: string): Promise<DebitWithPermissions | null> {
    const newest = await this.db.dataDebitPermission.findFirst({
      where: { instanceId, debitKey: key },
      orderBy: { id: 'desc' },
      select: { id: true },
    });
    if (!newest) return null;
    await this.db.dataDebitPermission.update({
      where: { instanceId_debitKey_id: { instanceId, debitKey: key, id: newest.id } },
      data: { accepted: true, canceledAt: null },
    });
    return this.find(instanceId, key);
  }

  /**
   * Cancels every accepted, uncancelled term: at once, or (`atPeriodEnd`) at the end of the period
   * running at `at`. Null when the debit does not exist.
   */
  async cancel(instanceId: string, key: string, at: Date, atPeriodEnd = false): Promise<DebitWithPermissions | null> {
    await this.db.dataDebitPermission.updateMany({
      where: { instanceId, debitKey: key, accepted: true, canceledAt: null },
      data: { canceledAt: at, cancelAtPeriodEnd: atPeriodEnd },
    });
    return this.find(instanceId, key);
  }
}
