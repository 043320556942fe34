// The hot paths (instance lookup, account read, file get and search) skip Prisma: its 6.x client
// compiles every query again, which costs several times the query itself (docs/performance.md). They
// go to the same pool through pg, with parameters always bound, and the fixed-text ones as named
// prepared statements, which PostgreSQL parses and plans once per connection.
import type pg from 'pg';

/** Runs one parameterised statement and returns its rows; `$1`… placeholders. */
export type Rows = <R>(text: string, values: unknown[]) => Promise<R[]>;

const statementNames = new Map<string, string>();

/** A statement name per distinct text. Texts come from code only, so the map stays small. */
function nameOf(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `pds_${statementNames.size}`;
    statementNames.set(text, name);
  }
  return name;
}

/** Named prepared statement on the pool. */
export function preparedRows(pool: pg.Pool): Rows {
  return async <R>(text: string, values: unknown[]) => (await pool.query({ name: nameOf(text), text, values })).rows as R[];
}

/** Plain parameterised statement on the pool, planned for its values (for texts built per request). */
export function plainRows(pool: pg.Pool): Rows {
  return async <R>(text: string, values: unknown[]) => (await pool.query(text, values)).rows as R[];
}

/** The same statements inside a Prisma transaction. */
export function transactionRows(tx: { $queryRawUnsafe<T>(query: string, ...values: unknown[]): Promise<T> }): Rows {
  return <R>(text: string, values: unknown[]) => tx.$queryRawUnsafe<R[]>(text, ...values);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a `::uuid` parameter would parse; an id that is no uuid names nothing (and must not be a 500). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
