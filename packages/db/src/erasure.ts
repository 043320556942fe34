// Erasing a closed instance's rows (the purge job, apps/gateway/src/jobs/instance-purge.ts). The tables
// are read from the catalog, never listed by hand: a table added later that carries "instanceId" is
// erased too without anyone remembering it. The Instance row (with the key the purge still needs to
// sign its dex call) goes last, in the transaction that retires the address, so a purge killed at any
// point is found again by the next sweep and simply runs again.
import type { GatewayDb } from './clients';
import { sqlOn, transaction, type Sql } from './sql';

/** What the purge needs of an instance whose grace period has ended. */
export interface ClosedInstance {
  id: string;
  address: string;
  keyId: string;
  privateKeyEnc: string;
}

/** Every table of the public schema with an "instanceId" column, each with the tables it references. */
const TABLES = `SELECT c.relname AS "name",
    ARRAY(SELECT DISTINCT r.relname FROM pg_constraint con JOIN pg_class r ON r.oid = con.confrelid
          WHERE con.conrelid = c.oid AND con.contype = 'f' AND con.confrelid <> c.oid)::text[] AS "references"
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
    AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'instanceId' AND NOT a.attisdropped)
  ORDER BY c.relname`;

/**
 * Tables in an order that deletes a referencing row before the row it references (cascading keys do
 * not need it, but a NO ACTION key added later would otherwise stop the purge).
 */
export function referencingFirst(tables: { name: string; references: string[] }[]): string[] {
  const names = new Set(tables.map((t) => t.name));
  const order: string[] = [];
  const placed = new Set<string>();
  const visiting = new Set<string>();
  // Depth-first: a table is placed after every table that references it.
  const referencedBy = (name: string) => tables.filter((t) => t.references.includes(name)).map((t) => t.name);
  const place = (name: string) => {
    if (placed.has(name) || visiting.has(name)) return;
    visiting.add(name);
    for (const child of referencedBy(name)) if (names.has(child)) place(child);
    visiting.delete(name);
    placed.add(name);
    order.push(name);
  };
  for (const table of tables) place(table.name);
  return order;
}

export class InstanceErasureRepository {
  private readonly sql: Sql;

  constructor(private readonly db: GatewayDb) {
    this.sql = sqlOn(db.pool);
  }

  /** Closing instances whose grace period ended at or before `now`, oldest first. */
  due(now: Date, take: number): Promise<ClosedInstance[]> {
    return this.sql.prepared<ClosedInstance>(
      `SELECT "id", "address", "keyId", "privateKeyEnc" FROM "Instance"
       WHERE "state" = 'closing' AND "closeAfter" <= $1::timestamptz ORDER BY "closeAfter", "id" LIMIT $2`,
      [now, take],
    );
  }

  /** The tables that carry "instanceId", referencing tables first (from the catalog). */
  async tenantTables(): Promise<string[]> {
    return referencingFirst(await this.sql.prepared<{ name: string; references: string[] }>(TABLES, []));
  }

  /**
   * Deletes every row of the instance, table by table, then the instance itself and retires its
   * address in one transaction. Each step finds nothing left by an earlier run, so it can be repeated.
   * Only an instance still closing (an owner who cancelled in time keeps everything).
   * How many rows went, per table.
   */
  async erase(instance: Pick<ClosedInstance, 'id' | 'address'>, at: Date): Promise<Record<string, number>> {
    const removed: Record<string, number> = {};
    const closing = () =>
      this.sql.prepared<{ id: string }>(`SELECT "id" FROM "Instance" WHERE "id" = $1::uuid AND "state" = 'closing'`, [instance.id]);
    if ((await closing()).length === 0) return removed;
    for (const table of await this.tenantTables()) {
      // The name comes from the catalog and is quoted as an identifier; the id is a parameter.
      removed[table] = await this.sql.count(`DELETE FROM "${table.replace(/"/g, '""')}" WHERE "instanceId" = $1::uuid`, [instance.id]);
    }
    await transaction(this.db.pool, async (tx) => {
      const gone = await tx.count(`DELETE FROM "Instance" WHERE "id" = $1::uuid AND "state" = 'closing'`, [instance.id]);
      if (gone > 0)
        await tx.count(`INSERT INTO "RetiredAddress" ("address", "retiredAt") VALUES ($1, $2::timestamptz) ON CONFLICT DO NOTHING`, [
          instance.address,
          at,
        ]);
      removed.Instance = gone;
    });
    return removed;
  }
}
