// The one way the product talks to PostgreSQL at run time: pg statements through these helpers, every
// value a bound parameter. Prisma keeps the schema and the migrations only; its client compiles each
// query again and cost several times the query itself (docs/performance.md, "One query path").
import type pg from 'pg';

/** Runs one parameterised statement and returns its rows; `$1`… placeholders. */
export type Rows = <R>(text: string, values: unknown[]) => Promise<R[]>;

/** The statements a repository sends: on the pool, or on the one client of a transaction. */
export interface Sql {
  /** A fixed text as a named prepared statement: parsed and planned once per connection. */
  prepared: Rows;
  /** A text built per request (a search template's shape), sent unnamed and planned for its values. */
  plain: Rows;
  /** A fixed text's number of rows written (UPDATE, DELETE, INSERT … ON CONFLICT DO NOTHING). */
  count(text: string, values: unknown[]): Promise<number>;
}

/** Told every statement text before it is sent; for tests that check what the product sends. */
export type StatementListener = (text: string) => void;

let listener: StatementListener | undefined;

/** Switches the statement hook on (a listener) or off (undefined). One per process: tests only. */
export function listenToStatements(next: StatementListener | undefined): void {
  listener = next;
}

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

type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>;

/** Statements on a pool (each on whichever connection is free) or on one client. */
export function sqlOn(on: Queryable): Sql {
  const send = (config: pg.QueryConfig) => {
    listener?.(config.text);
    return on.query(config);
  };
  return {
    prepared: async <R>(text: string, values: unknown[]) => (await send({ name: nameOf(text), text, values })).rows as R[],
    plain: async <R>(text: string, values: unknown[]) => (await send({ text, values })).rows as R[],
    count: async (text, values) => (await send({ name: nameOf(text), text, values })).rowCount ?? 0,
  };
}

/**
 * Runs `work` in one transaction on one pooled client: COMMIT when it resolves, ROLLBACK when it
 * throws. The client always goes back to the pool; one whose ROLLBACK failed (a broken connection)
 * is discarded instead of being handed to the next caller mid-transaction.
 */
export async function transaction<T>(pool: pg.Pool, work: (tx: Sql) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(sqlOn(client));
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: Error) => {
      broken = rollbackError;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}

/** The SQLSTATE of a failed statement (`23505` unique violation, `57014` cancelled…), if it has one. */
export function postgresErrorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** PostgreSQL's code for a unique violation: an insert that found its key taken. */
export const UNIQUE_VIOLATION = '23505';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a `::uuid` parameter would parse; an id that is no uuid names nothing (and must not be a 500). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
