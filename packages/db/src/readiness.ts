// Readiness of a database for the process that uses it: it answers, and it has every migration this
// build knows (without them every request would fail). Used by /readyz and at start-up.
import type { DexDb, GatewayDb } from './clients';
import { pendingMigrations, type MigrationTarget } from './migrations';
import { sqlOn } from './sql';

export function databaseChecks(target: MigrationTarget, db: GatewayDb | DexDb): Record<string, () => Promise<void>> {
  const sql = sqlOn(db.pool);
  return {
    postgres: () => plainly(async () => void (await sql.prepared('SELECT 1', []))),
    migrations: () =>
      plainly(async () => {
        const pending = await pendingMigrations(target, (text) => sql.prepared<{ migration_name: string }>(text, []));
        if (pending.length > 0) throw new Error(`not applied: ${pending.join(', ')}`);
      }),
  };
}

/** A connection refused on every address of a host fails with an AggregateError and no message: name its code. */
async function plainly(check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (error) {
    const e = error as { message?: string; code?: string };
    if (e.message) throw error;
    throw new Error(e.code ?? 'failed', { cause: error });
  }
}
