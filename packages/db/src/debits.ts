// Data debits: a bundle's records offered to one account under terms (permissions) the owner accepts.
import type { GatewayDb } from './clients';
import type { DataDebit, DataDebitPermission } from './generated/gateway/client';
import { commitWithEvents, type Actor } from './outbox';
import { sqlOn, transaction, type Sql } from './sql';

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

const DEBIT_COLUMNS = `"instanceId", "key", "requestClientName", "requestClientUrl", "requestClientLogoUrl", "requestApplicationId",
  "requestDescription", "holderId", "createdAt"`;

/** The terms of an instance's debits ($2: which keys) with their bundles, oldest terms first. */
const PERMISSIONS_OF = `SELECT p."instanceId", p."debitKey", p."id", p."createdAt", p."purpose", p."start", p."period", p."cancelAtPeriodEnd",
    p."termsUrl", p."bundleName", p."accepted", p."canceledAt", b."query" AS "bundleQuery"
  FROM "DataDebitPermission" p JOIN "DataBundle" b ON b."instanceId" = p."instanceId" AND b."name" = p."bundleName"
  WHERE p."instanceId" = $1::uuid AND p."debitKey" = ANY($2::text[])
  ORDER BY p."id"`;

/** $1 instance, $2 debit key, then the terms; $9 createdAt. */
const INSERT_TERMS = `INSERT INTO "DataDebitPermission" ("instanceId", "debitKey", "purpose", "start", "period", "cancelAtPeriodEnd", "termsUrl",
    "bundleName", "createdAt")
  VALUES ($1::uuid, $2, $3, $4::timestamptz, $5, $6, $7, $8, $9::timestamptz)`;

type PermissionRow = Omit<DataDebitPermission, 'id'> & { id: string; bundleQuery: unknown };

export class DataDebitRepository {
  private readonly sql: Sql;

  constructor(private readonly db: GatewayDb) {
    this.sql = sqlOn(db.pool);
  }

  async find(instanceId: string, key: string): Promise<DebitWithPermissions | null> {
    const [debit] = await this.withPermissions(
      instanceId,
      await this.sql.prepared<DataDebit>(`SELECT ${DEBIT_COLUMNS} FROM "DataDebit" WHERE "instanceId" = $1::uuid AND "key" = $2`, [
        instanceId,
        key,
      ]),
    );
    return debit ?? null;
  }

  async list(instanceId: string): Promise<DebitWithPermissions[]> {
    return this.withPermissions(
      instanceId,
      await this.sql.prepared<DataDebit>(`SELECT ${DEBIT_COLUMNS} FROM "DataDebit" WHERE "instanceId" = $1::uuid ORDER BY "key"`, [
        instanceId,
      ]),
    );
  }

  /** A new debit with its first terms (one transaction), not yet accepted; null when the key is taken. */
  async create(instanceId: string, key: string, request: DebitRequest, terms: DebitTerms): Promise<DebitWithPermissions | null> {
    const now = new Date();
    const created = await transaction(this.db.pool, async (tx) => {
      const inserted = await tx.count(
        `INSERT INTO "DataDebit" ("instanceId", "key", "requestClientName", "requestClientUrl", "requestClientLogoUrl",
                                  "requestApplicationId", "requestDescription", "holderId", "createdAt")
        VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8::uuid, $9::timestamptz)
        ON CONFLICT DO NOTHING`,
        [
          instanceId,
          key,
          request.requestClientName,
          request.requestClientUrl,
          request.requestClientLogoUrl,
          request.requestApplicationId ?? null,
          request.requestDescription ?? null,
          request.holderId ?? null,
          now,
        ],
      );
      if (inserted > 0) await insertTerms(tx, instanceId, key, terms, now);
      return inserted > 0;
    });
    return created ? this.find(instanceId, key) : null;
  }

  /** New terms for an existing debit (not accepted until enabled); null when the debit does not exist. */
  async addTerms(
    instanceId: string,
    key: string,
    terms: DebitTerms,
    request: Partial<DebitRequest> = {},
  ): Promise<DebitWithPermissions | null> {
    const added = await transaction(this.db.pool, async (tx) => {
      // A field the request leaves out keeps its value.
      const updated = await tx.count(
        `UPDATE "DataDebit" SET "requestClientName" = COALESCE($3, "requestClientName"),
          "requestClientUrl" = COALESCE($4, "requestClientUrl"), "requestClientLogoUrl" = COALESCE($5, "requestClientLogoUrl"),
          "requestApplicationId" = COALESCE($6, "requestApplicationId"), "requestDescription" = COALESCE($7, "requestDescription"),
          "holderId" = COALESCE($8::uuid, "holderId")
        WHERE "instanceId" = $1::uuid AND "key" = $2`,
        [
          instanceId,
          key,
          request.requestClientName ?? null,
          request.requestClientUrl ?? null,
          request.requestClientLogoUrl ?? null,
          request.requestApplicationId ?? null,
          request.requestDescription ?? null,
          request.holderId ?? null,
        ],
      );
      if (updated > 0) await insertTerms(tx, instanceId, key, terms, new Date());
      return updated > 0;
    });
    return added ? this.find(instanceId, key) : null;
  }

  /** Accepts the newest terms and ends any cancellation of them; null when the debit does not exist. */
  async enable(instanceId: string, key: string, actor: Actor): Promise<DebitWithPermissions | null> {
    const enabled = await transaction(this.db.pool, async (tx) => {
      const count = await tx.count(
        `UPDATE "DataDebitPermission" SET "accepted" = true, "canceledAt" = NULL
        WHERE "instanceId" = $1::uuid AND "debitKey" = $2
          AND "id" = (SELECT max("id") FROM "DataDebitPermission" WHERE "instanceId" = $1::uuid AND "debitKey" = $2)`,
        [instanceId, key],
      );
      if (count > 0) await commitWithEvents(tx, instanceId, [{ type: 'debit.enabled', object: { debitKey: key } }], actor);
      return count > 0;
    });
    return enabled ? this.find(instanceId, key) : null;
  }

  /**
   * Cancels every accepted, uncancelled term: at once, or (`atPeriodEnd`) at the end of the period
   * running at `at`. Null when the debit does not exist.
   */
  async cancel(instanceId: string, key: string, at: Date, atPeriodEnd: boolean, actor: Actor): Promise<DebitWithPermissions | null> {
    // One event however many terms it cancels: the debit is what was cancelled.
    await transaction(this.db.pool, async (tx) => {
      const count = await tx.count(
        `UPDATE "DataDebitPermission" SET "canceledAt" = $3::timestamptz, "cancelAtPeriodEnd" = $4
        WHERE "instanceId" = $1::uuid AND "debitKey" = $2 AND "accepted" AND "canceledAt" IS NULL`,
        [instanceId, key, at, atPeriodEnd],
      );
      if (count > 0) await commitWithEvents(tx, instanceId, [{ type: 'debit.cancelled', object: { debitKey: key } }], actor);
    });
    return this.find(instanceId, key);
  }

  /** The debits with their terms (bundle included), read in one more statement for all of them. */
  private async withPermissions(instanceId: string, debits: DataDebit[]): Promise<DebitWithPermissions[]> {
    if (debits.length === 0) return [];
    const rows = await this.sql.prepared<PermissionRow>(PERMISSIONS_OF, [instanceId, debits.map((d) => d.key)]);
    const byDebit = new Map<string, DebitPermission[]>();
    for (const { bundleQuery, id, ...row } of rows) {
      const permission = { ...row, id: BigInt(id), bundle: { name: row.bundleName, query: bundleQuery } };
      byDebit.set(row.debitKey, [...(byDebit.get(row.debitKey) ?? []), permission]);
    }
    return debits.map((debit) => ({ ...debit, permissions: byDebit.get(debit.key) ?? [] }));
  }
}

function insertTerms(sql: Sql, instanceId: string, key: string, terms: DebitTerms, now: Date): Promise<number> {
  return sql.count(INSERT_TERMS, [
    instanceId,
    key,
    terms.purpose,
    terms.start,
    terms.period,
    terms.cancelAtPeriodEnd,
    terms.termsUrl,
    terms.bundleName,
    now,
  ]);
}
