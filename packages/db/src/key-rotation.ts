// Master-key rotation: every sealed private key re-sealed under a new key (docs/deploy.md). Run with
// the cluster stopped. Pages through the rows; each page is re-sealed by one statement, so whole or
// not at all, and a row already under the new key is left alone, so a stopped run can simply be run again.
import type { DexDb, GatewayDb } from './clients';
import { sqlOn, type Sql } from './sql';

/** The re-sealed value, or null when the row needs no change. */
export type Reseal = (sealed: string) => string | null;

const PAGE = 500;
/** Below every instance id: where the first page starts. */
const BEFORE_ALL = '00000000-0000-0000-0000-000000000000';

/** Instance private keys in the gateway database; returns how many rows changed. */
export async function resealInstanceKeys(db: GatewayDb, reseal: Reseal): Promise<number> {
  const sql = sqlOn(db.pool);
  let changed = 0;
  let after = BEFORE_ALL;
  for (;;) {
    const page = await sql.prepared<Sealed>(
      `SELECT "id", "privateKeyEnc" FROM "Instance" WHERE "id" > $1::uuid ORDER BY "id" LIMIT ${PAGE}`,
      [after],
    );
    if (page.length === 0) return changed;
    changed += await writeResealed(sql, '"Instance"', '::uuid', page, reseal);
    after = page[page.length - 1]!.id;
  }
}

/** Dex's own signing key in dex's database; returns how many rows changed (0 or 1). */
export async function resealDexKey(db: DexDb, reseal: Reseal): Promise<number> {
  const sql = sqlOn(db.pool);
  return writeResealed(sql, '"DexKey"', '', await sql.prepared<Sealed>(`SELECT "id", "privateKeyEnc" FROM "DexKey"`, []), reseal);
}

interface Sealed {
  id: string;
  privateKeyEnc: string;
}

/** Writes the rows' new sealed keys in one statement (`table` and `idCast` come from this module only). */
async function writeResealed(sql: Sql, table: string, idCast: string, rows: Sealed[], reseal: Reseal): Promise<number> {
  const changes = rows.flatMap(({ id, privateKeyEnc }) => {
    const next = reseal(privateKeyEnc);
    return next === null ? [] : [{ id, next }];
  });
  if (changes.length === 0) return 0;
  return sql.count(
    `UPDATE ${table} AS t SET "privateKeyEnc" = u."next"
    FROM unnest($1::text[], $2::text[]) AS u("id", "next") WHERE t."id" = u."id"${idCast}`,
    [changes.map((c) => c.id), changes.map((c) => c.next)],
  );
}
