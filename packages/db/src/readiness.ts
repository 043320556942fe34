// Readiness of a database for the process that uses it: it answers, and it has every migration this
// build knows (without them every request would fail). Used by /readyz and at start-up.
import type { DexDb, GatewayDb } from './clients';
import { pendingMigrations, type MigrationTarget } from './migrations';

export function databaseChecks(target: MigrationTarget, db: GatewayDb | DexDb): Record<string, () => Promise<void>> {
  // Both clients have the same raw-query methods; the union hides that from the type checker.
  const raw = db as GatewayDb;
  return {
    postgres: () => plainly(async () => void (await raw.$queryRaw`SELECT 1`)),
    migrations: () =>
      plainly(async () => {
        // A constant statement, no input: the unsafe variant only because it takes a string.
        const pending = await pendingMigrations(target, (sql) => raw.$queryRawUnsafe(sql));
        if (pending.length > 0) throw new Error(`not applied: ${pending.join(', ')}`);
      }),
  };
}

/** Rethrows Prisma's multi-line invocation report as the database's own message (`database "x" does not exist`). */
async function plainly(check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (error) {
    const e = error as { message?: string; meta?: { driverAdapterError?: { cause?: { originalMessage?: string; kind?: string } } } };
    const cause = e.meta?.driverAdapterError?.cause;
    const lines = (e.message ?? String(error)).split('\n').filter((line) => line.trim() !== '');
    throw new Error(cause?.originalMessage ?? cause?.kind ?? lines[lines.length - 1] ?? 'failed', { cause: error });
  }
}
